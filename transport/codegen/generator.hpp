#pragma once

// The code generator behind capnpc_swarm (see capnpc_swarm.cpp): it reads the loaded
// wire schema and writes Swarm's C++ for it. Split by what it writes: the value types
// (generator_types.cpp), the codec (generator_codec.cpp) and the samples
// (generator_samples.cpp).

#include <capnp/schema-loader.h>
#include <capnp/schema.capnp.h>
#include <capnp/schema.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

namespace swarm::codegen {

using capnp::StructSchema;
using capnp::Type;
using field = capnp::StructSchema::Field;
namespace sch = capnp::schema;

/// Stops the generation: what in the schema it cannot map, and why.
[[noreturn]] void fail(const std::string& why);

/// `TaskSubmit` -> `task_submit`.
std::string snake(const std::string& camel);

/// `taskSubmit` -> `TASK_SUBMIT`, as capnp names a union's members.
std::string upper_snake(const std::string& camel);

/// The C++ accessor suffix capnp generates for a field: `sentNs` -> `SentNs`.
std::string cap(const std::string& s);

/// A schema node's name inside its file: "transport/wire.capnp:Arg" -> "Arg".
std::string short_name(capnp::Schema s);

/// A comment as `///` lines indented by `indent`.
std::string doc_lines(const std::string& text, const std::string& indent);

/// Writes the C++ of the schema whose root struct is annotated `variant("message")`.
class generator {
public:
  generator(capnp::SchemaLoader& loader, sch::CodeGeneratorRequest::Reader req)
      : loader_(loader) {
    for (auto si : req.getSourceInfo()) {
      docs_[si.getId()] = si.getDocComment().cStr();
      auto members = si.getMembers();
      for (unsigned i = 0; i < members.size(); ++i)
        member_docs_[{si.getId(), i}] = members[i].getDocComment().cStr();
    }
  }

  void run(uint64_t file_id) {
    for (auto nested : loader_.get(file_id).getProto().getNestedNodes()) {
      auto s = loader_.get(nested.getId());
      if (s.getProto().isStruct() &&
          text(s.getProto().getAnnotations(), "variant") == "message")
        root_ = s.asStruct();
    }
    if (!root_) fail("no struct of the schema is annotated variant(\"message\")");
    visit(*root_);
  }

  std::string header() const;
  std::string source() const;
  std::string envelope_header() const;
  std::string samples() const;

private:
  // --- annotations ---
  std::string ann_name(uint64_t id) const {
    auto n = loader_.get(id).getProto();
    std::string d = n.getDisplayName().cStr();
    return d.substr(n.getDisplayNamePrefixLength());
  }
  std::optional<sch::Value::Reader> find(capnp::List<sch::Annotation>::Reader as,
                                         const std::string& name) const {
    for (auto a : as)
      if (ann_name(a.getId()) == name) return a.getValue();
    return std::nullopt;
  }
  std::string text(capnp::List<sch::Annotation>::Reader as,
                   const std::string& name) const {
    auto v = find(as, name);
    return v ? std::string{v->getText().cStr()} : std::string{};
  }
  bool has(capnp::List<sch::Annotation>::Reader as, const std::string& name) const {
    return find(as, name).has_value();
  }
  std::vector<std::string> texts(capnp::List<sch::Annotation>::Reader as,
                                 const std::string& name) const {
    std::vector<std::string> out;
    if (auto v = find(as, name))
      for (auto t : v->getList().getAs<capnp::List<capnp::Text>>())
        out.emplace_back(t.cStr());
    return out;
  }

  // --- names ---
  std::string struct_name(StructSchema s) const {
    auto as = s.getProto().getAnnotations();
    if (auto v = text(as, "variant"); !v.empty()) return v;
    if (auto v = text(as, "pairList"); !v.empty()) return v;
    if (auto v = text(as, "name"); !v.empty()) return v;
    return snake(short_name(s));
  }
  // The name of a struct's put_/get_ functions (a pair struct's convert one pair).
  std::string fn_name(StructSchema s) const {
    if (is_pair(s)) return snake(short_name(s));
    return struct_name(s);
  }
  std::string field_name(field f) const {
    auto v = text(f.getProto().getAnnotations(), "name");
    return v.empty() ? snake(f.getProto().getName().cStr()) : v;
  }
  std::string capnp_type(StructSchema s) const { return "wire::" + short_name(s); }
  bool is_pair(StructSchema s) const {
    return has(s.getProto().getAnnotations(), "pairList");
  }
  bool is_variant(StructSchema s) const {
    return has(s.getProto().getAnnotations(), "variant");
  }
  static bool in_union(field f) {
    return f.getProto().getDiscriminantValue() != sch::Field::NO_DISCRIMINANT;
  }
  std::string doc_of(StructSchema s) const {
    auto it = docs_.find(s.getProto().getId());
    return it == docs_.end() ? "" : it->second;
  }
  std::string doc_of(field f) const {
    auto it =
        member_docs_.find({f.getContainingStruct().getProto().getId(), f.getIndex()});
    return it == member_docs_.end() ? "" : it->second;
  }
  // A member of a variant's union that carries the variant's other fields.
  std::string alternative_of(field f) const {
    return text(f.getProto().getAnnotations(), "alternative");
  }
  // The C++ type of member `f` of a variant's union.
  std::string member_type(field f) const {
    auto alt = alternative_of(f);
    if (!alt.empty()) return alt;
    return cxx(f.getType());
  }

  // --- types ---
  std::string cxx(Type t) const {
    switch (t.which()) {
    case sch::Type::BOOL:
      return "bool";
    case sch::Type::INT8:
      return "int8_t";
    case sch::Type::INT16:
      return "int16_t";
    case sch::Type::INT32:
      return "int32_t";
    case sch::Type::INT64:
      return "int64_t";
    case sch::Type::UINT8:
      return "uint8_t";
    case sch::Type::UINT16:
      return "uint16_t";
    case sch::Type::UINT32:
      return "uint32_t";
    case sch::Type::UINT64:
      return "uint64_t";
    case sch::Type::FLOAT32:
      return "float";
    case sch::Type::FLOAT64:
      return "double";
    case sch::Type::TEXT:
      return "std::string";
    case sch::Type::DATA:
      return "std::vector<uint8_t>";
    case sch::Type::LIST: {
      auto e = t.asList().getElementType();
      if (e.isStruct() && is_pair(e.asStruct())) return struct_name(e.asStruct());
      return "std::vector<" + cxx(e) + ">";
    }
    case sch::Type::STRUCT:
      return struct_name(t.asStruct());
    default:
      fail("a field of a type Swarm's generator does not map (void, enum, interface "
           "or any pointer)");
    }
  }
  std::string field_type(field f) const {
    auto as = f.getProto().getAnnotations();
    if (!texts(as, "enumeration").empty()) return field_name(f) + "_type";
    if (auto only = text(as, "only"); !only.empty()) return member_type(only_member(f));
    return cxx(f.getType());
  }
  field only_member(field f) const {
    auto only = text(f.getProto().getAnnotations(), "only");
    auto s = f.getType().asStruct();
    for (auto m : s.getUnionFields())
      if (only == m.getProto().getName().cStr()) return m;
    fail(field_name(f) + ": no union member '" + only + "' in " + short_name(s));
  }
  std::string initializer(field f) const;
  // cxx.capnp's Lane, which `lane` is generated from.
  capnp::EnumSchema lane_enum() const {
    for (auto s : loader_.getAllLoaded())
      if (s.getProto().isEnum() && short_name(s) == "Lane") return s.asEnum();
    fail("cxx.capnp's enum Lane is not loaded");
  }
  // A struct's union members in the order of their discriminants, as std::variant has
  // them.
  static std::vector<field> members_of(StructSchema s) {
    std::vector<field> out;
    for (auto m : s.getUnionFields())
      out.push_back(m);
    std::sort(out.begin(), out.end(), [](field a, field b) {
      return a.getProto().getDiscriminantValue() < b.getProto().getDiscriminantValue();
    });
    return out;
  }
  std::vector<std::string> variant_types(StructSchema s) const {
    std::vector<std::string> out;
    for (auto m : members_of(s))
      out.push_back(member_type(m));
    return out;
  }

  // Structs in the order C++ needs them: each after those it holds.
  void visit(StructSchema s) {
    auto id = s.getProto().getId();
    if (seen_.count(id)) return;
    seen_.insert(id);
    for (auto f : s.getFields())
      deps(f.getType());
    order_.push_back(s);
  }
  void deps(Type t) {
    if (t.isList()) deps(t.asList().getElementType());
    if (t.isStruct()) visit(t.asStruct());
  }

  // --- emitters ---
  void declare_struct(std::ostream& o, StructSchema s) const;
  void declare_fields(std::ostream& o, StructSchema s, const std::string& name,
                      const std::vector<field>& fields, bool equality,
                      const std::string& base) const;
  void define_put(std::ostream& o, StructSchema s) const;
  void define_get(std::ostream& o, StructSchema s) const;
  void put_field(std::ostream& o, field f, const std::string& from) const;
  void get_field(std::ostream& o, field f, const std::string& struct_cxx) const;
  void put_list(std::ostream& o, Type t, const std::string& list, const std::string& v,
                int depth, const std::string& indent) const;
  void get_list(std::ostream& o, Type t, const std::string& reader,
                const std::string& into, int depth, const std::string& indent) const;
  std::string read_value(Type t, const std::string& r) const;
  std::string sample(Type t, int salt, int alt) const;
  std::string sample_struct(StructSchema s, int salt, int alt) const;
  std::string sample_alternative(StructSchema s, field m, int salt, int alt) const;
  std::string sample_fields(StructSchema s, const std::string& var, int salt,
                            int alt) const;

  capnp::SchemaLoader& loader_;
  std::map<uint64_t, std::string> docs_;
  std::map<std::pair<uint64_t, unsigned>, std::string> member_docs_;
  std::optional<StructSchema> root_;
  std::set<uint64_t> seen_;
  std::vector<StructSchema> order_;
};

} // namespace swarm::codegen
