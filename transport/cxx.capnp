@0xf6989b3b569074e1;
# How wire.capnp's messages look as C++ values, for Swarm's code generator
# (transport/codegen/capnpc_swarm.cpp). Without an annotation a struct is a C++ struct
# named in snake_case, a field a member named in snake_case, a List a std::vector.

$import "/capnp/c++.capnp".namespace("swarm::wire::cxx");

# The C++ name, where it is not the schema's name in snake_case.
annotation name(struct, field) :Text;

# A UInt8 field holding an enum class of these values, in order from 0, named
# `<field>_type` inside its struct. A value past the last is refused when decoded.
annotation enumeration(field) :List(Text);

# A struct of two fields whose lists are this C++ vector of std::pair.
annotation pairList(struct) :Text;

# A struct that is only its unnamed union: in C++ a std::variant of its members' types,
# declared under this name.
annotation variant(struct) :Text;

# A member of a `variant` struct's union that is a C++ struct of this name: the member
# itself and the struct's fields outside the union.
annotation alternative(field) :Text;

# A struct with an unnamed union beside other fields: the union is a std::variant member
# of this name.
annotation unionField(struct) :Text;

# A field of a `variant` struct's type that may hold only the member of this name: its C++
# type is that member's, and any other member is refused when decoded.
annotation only(field) :Text;

# The lane a message travels on; `control` when not annotated.
enum Lane {
  control @0;
  call @1;
  bulk @2;
}
annotation lane(struct) :Lane;

# A Bool field that, when set, sends its message on the control lane.
annotation controlWhenSet(field) :Void;

# A Data field that travels after the message, as the frame's raw tail, not in it. Its
# C++ struct derives from this type (transport/<name>.hpp), which holds the bytes.
annotation rawTail(field) :Text;
