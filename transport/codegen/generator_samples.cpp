// One message of each kind, each field set: wire_samples.hpp.

#include "transport/codegen/generator.hpp"

#include <sstream>

namespace swarm::codegen {

std::string generator::sample(Type t, int salt, int alt) const {
  switch (t.which()) {
  case sch::Type::BOOL:
    return "true";
  case sch::Type::INT8:
  case sch::Type::INT16:
  case sch::Type::INT32:
  case sch::Type::INT64:
    return "-" + std::to_string(salt % 100 + 2);
  case sch::Type::UINT8:
  case sch::Type::UINT16:
  case sch::Type::UINT32:
  case sch::Type::UINT64:
    return std::to_string(salt % 200 + 2);
  case sch::Type::FLOAT32:
  case sch::Type::FLOAT64:
    return std::to_string(salt % 100 + 2) + ".5";
  case sch::Type::TEXT:
    return "std::string{\"t" + std::to_string(salt) + "\"}";
  case sch::Type::DATA:
    return "std::vector<uint8_t>{1, 2, " + std::to_string(salt % 250) + "}";
  case sch::Type::LIST: {
    auto e = t.asList().getElementType();
    std::string out = cxx(t) + "{";
    // A list of a variant holds each member once.
    int n = e.isStruct() && is_variant(e.asStruct())
                ? static_cast<int>(members_of(e.asStruct()).size())
                : 1;
    for (int i = 0; i < n; ++i) {
      if (e.isStruct() && is_pair(e.asStruct())) {
        auto fs = e.asStruct().getFields();
        out += (i ? ", " : "") + std::string{"{"} + sample(fs[0].getType(), salt + 1, 0) +
               ", " + sample(fs[1].getType(), salt + 2, 0) + "}";
      } else {
        out += (i ? ", " : "") + sample(e, salt + i + 1, i);
      }
    }
    return out + "}";
  }
  case sch::Type::STRUCT:
    return sample_struct(t.asStruct(), salt, alt);
  default:
    fail("no sample for this type");
  }
}

std::string generator::sample_fields(StructSchema s, const std::string& var, int salt,
                                     int alt) const {
  std::string out;
  int k = 0;
  auto u = text(s.getProto().getAnnotations(), "unionField");
  for (auto f : s.getNonUnionFields()) {
    auto as = f.getProto().getAnnotations();
    auto name = var + "." + field_name(f);
    ++k;
    if (auto enums = texts(as, "enumeration"); !enums.empty()) {
      out += name + " = decltype(" + name + ")::" + enums.back() + "; ";
    } else if (!text(as, "only").empty()) {
      auto m = only_member(f);
      out += name + " = " + sample_alternative(f.getType().asStruct(), m, salt + k, alt) +
             "; ";
    } else if (!text(as, "rawTail").empty()) {
      out += name + " = {1, 2, 3, 4, 5}; ";
    } else if (f.getType().which() == sch::Type::BOOL) {
      out += name + " = " +
             (f.getProto().getSlot().getDefaultValue().getBool() ? "false" : "true") +
             "; ";
    } else {
      out += name + " = " + sample(f.getType(), salt * 7 + k, alt) + "; ";
    }
  }
  auto members = members_of(s);
  if (!members.empty() && !u.empty()) {
    auto i = static_cast<size_t>(alt) % members.size();
    out += var + "." + u + ".emplace<" + std::to_string(i) + ">(" +
           sample(members[i].getType(), salt + 50, alt) + "); ";
  }
  return out;
}

std::string generator::sample_alternative(StructSchema s, field m, int salt,
                                          int alt) const {
  auto a = alternative_of(m);
  if (a.empty()) return sample(m.getType(), salt, alt);
  std::string var = "v" + std::to_string(salt);
  std::string out = "[] { " + a + " " + var + "; " + var + "." + field_name(m) + " = " +
                    sample(m.getType(), salt + 1, alt) + "; ";
  int k = 1;
  for (auto f : s.getNonUnionFields())
    out +=
        var + "." + field_name(f) + " = " + sample(f.getType(), salt + ++k, alt) + "; ";
  return out + "return " + var + "; }()";
}

std::string generator::sample_struct(StructSchema s, int salt, int alt) const {
  if (is_variant(s)) {
    auto members = members_of(s);
    auto i = static_cast<size_t>(alt) % members.size();
    return struct_name(s) + "{std::in_place_index<" + std::to_string(i) + ">, " +
           sample_alternative(s, members[i], salt, alt) + "}";
  }
  std::string var = "v" + std::to_string(salt);
  return "[] { " + struct_name(s) + " " + var + "; " + sample_fields(s, var, salt, alt) +
         "return " + var + "; }()";
}

std::string generator::samples() const {
  std::ostringstream o;
  o << "#pragma once\n\n"
       "// Generated from transport/wire.capnp by transport/codegen/capnpc_swarm: do "
       "not\n"
       "// edit. For tests and the fuzz corpus.\n\n"
       "#include <vector>\n\n#include \"transport/wire_message.hpp\"\n\n"
       "namespace swarm::wire_msg {\n\n"
       "/// Messages of every kind, each field set to something other than its default; "
       "a\n"
       "/// message holding a union comes once per member of it.\n"
       "inline std::vector<message> sample_messages() {\n  std::vector<message> out;\n";
  auto members = members_of(*root_);
  for (size_t i = 0; i < members.size(); ++i) {
    auto s = members[i].getType().asStruct();
    size_t n = 1;
    for (auto f : s.getFields()) {
      if (in_union(f)) n = std::max(n, members_of(s).size());
      if (f.getType().isStruct() && is_variant(f.getType().asStruct()) &&
          text(f.getProto().getAnnotations(), "only").empty())
        n = std::max(n, members_of(f.getType().asStruct()).size());
    }
    for (size_t a = 0; a < n; ++a)
      o << "  out.emplace_back(std::in_place_index<" << i << ">, "
        << sample_struct(s, static_cast<int>(i * 10), static_cast<int>(a)) << ");\n";
  }
  o << "  return out;\n}\n\n} // namespace swarm::wire_msg\n";
  return o.str();
}

} // namespace swarm::codegen
