// The messages as C++ value types: wire_message.hpp.

#include "transport/codegen/generator.hpp"

#include <sstream>

namespace swarm::codegen {

std::string generator::initializer(field f) const {
  auto as = f.getProto().getAnnotations();
  if (!f.getProto().isSlot()) fail(field_name(f) + ": groups are not mapped");
  auto dv = f.getProto().getSlot().getDefaultValue();
  auto enums = texts(as, "enumeration");
  if (!enums.empty()) {
    auto i = dv.getUint8();
    if (i >= enums.size()) fail(field_name(f) + ": its default is past its enumeration");
    return " = " + field_type(f) + "::" + enums[i];
  }
  switch (f.getType().which()) {
  case sch::Type::BOOL:
    return dv.getBool() ? " = true" : " = false";
  case sch::Type::INT8:
    return " = " + std::to_string(dv.getInt8());
  case sch::Type::INT16:
    return " = " + std::to_string(dv.getInt16());
  case sch::Type::INT32:
    return " = " + std::to_string(dv.getInt32());
  case sch::Type::INT64:
    return " = " + std::to_string(dv.getInt64());
  case sch::Type::UINT8:
    return " = " + std::to_string(dv.getUint8());
  case sch::Type::UINT16:
    return " = " + std::to_string(dv.getUint16());
  case sch::Type::UINT32:
    return " = " + std::to_string(dv.getUint32());
  case sch::Type::UINT64:
    return " = " + std::to_string(dv.getUint64());
  case sch::Type::FLOAT32:
  case sch::Type::FLOAT64: {
    double d =
        f.getType().which() == sch::Type::FLOAT32 ? dv.getFloat32() : dv.getFloat64();
    std::ostringstream s;
    s << d;
    return " = " + s.str();
  }
  default:
    return " = {}";
  }
}

void generator::declare_fields(std::ostream& o, StructSchema s, const std::string& name,
                               const std::vector<field>& fields, bool equality,
                               const std::string& base) const {
  auto doc = doc_of(s);
  if (!doc.empty()) o << doc_lines(doc, "");
  o << "struct " << name << (base.empty() ? "" : " : " + base) << " {\n";
  for (auto f : fields) {
    auto enums = texts(f.getProto().getAnnotations(), "enumeration");
    if (enums.empty()) continue;
    o << "  enum class " << field_name(f) << "_type : uint8_t { ";
    for (size_t i = 0; i < enums.size(); ++i)
      o << (i ? ", " : "") << enums[i] << " = " << i;
    o << " };\n";
  }
  std::vector<std::string> members;
  auto union_name = text(s.getProto().getAnnotations(), "unionField");
  bool union_done = false;
  for (auto f : fields) {
    if (!text(f.getProto().getAnnotations(), "rawTail").empty()) continue;
    if (in_union(f) && !union_name.empty()) {
      if (union_done) continue;
      union_done = true;
      o << "  std::variant<";
      bool first = true;
      for (auto m : members_of(s)) {
        o << (first ? "" : ", ") << member_type(m);
        first = false;
      }
      o << "> " << union_name << " = {};\n";
      members.push_back(union_name);
      continue;
    }
    auto fd = doc_of(f);
    if (!fd.empty()) o << doc_lines(fd, "  ");
    o << "  " << field_type(f) << " " << field_name(f) << initializer(f) << ";\n";
    members.push_back(field_name(f));
  }
  if (equality) {
    o << "\n  friend bool operator==(const " << name << "& a, const " << name
      << "& b) {\n"
      << "    return ";
    for (size_t i = 0; i < members.size(); ++i)
      o << (i ? " &&\n           " : "") << "a." << members[i] << " == b." << members[i];
    o << (members.empty() ? "true;\n  }\n" : ";\n  }\n");
    o << "  friend bool operator!=(const " << name << "& a, const " << name
      << "& b) { return !(a == b); }\n";
  }
  o << "};\n\n";
}

void generator::declare_struct(std::ostream& o, StructSchema s) const {
  if (is_pair(s)) {
    auto fs = s.getFields();
    if (fs.size() != 2) fail(short_name(s) + ": a pairList struct has two fields");
    auto doc = doc_of(s);
    if (!doc.empty()) o << doc_lines(doc, "");
    o << "using " << struct_name(s) << " = std::vector<std::pair<" << cxx(fs[0].getType())
      << ", " << cxx(fs[1].getType()) << ">>;\n\n";
    return;
  }
  if (is_variant(s)) {
    std::vector<field> outside;
    for (auto f : s.getNonUnionFields())
      outside.push_back(f);
    for (auto m : members_of(s)) {
      auto alt = alternative_of(m);
      if (alt.empty()) continue;
      std::vector<field> fs{m};
      fs.insert(fs.end(), outside.begin(), outside.end());
      declare_fields(o, s, alt, fs, true, "");
    }
    auto doc = doc_of(s);
    if (!doc.empty()) o << doc_lines(doc, "");
    o << "using " << struct_name(s) << " = std::variant<";
    bool first = true;
    for (auto m : members_of(s)) {
      o << (first ? "\n    " : ",\n    ") << member_type(m);
      first = false;
    }
    o << ">;\n\n";
    return;
  }
  std::string base;
  for (auto f : s.getFields())
    if (auto b = text(f.getProto().getAnnotations(), "rawTail"); !b.empty()) base = b;
  std::vector<field> fs;
  for (auto f : s.getFields())
    fs.push_back(f);
  declare_fields(o, s, struct_name(s), fs, base.empty(), base);
}

std::string generator::header() const {
  std::ostringstream o;
  o << "#pragma once\n\n"
       "// Generated from transport/wire.capnp by transport/codegen/capnpc_swarm: do "
       "not\n"
       "// edit. The cross-node messages as plain C++ values; nothing outside "
       "transport/\n"
       "// sees Cap'n Proto types. What each field means is written in the schema.\n\n"
       "#include <cstdint>\n#include <string>\n#include <utility>\n#include <variant>\n"
       "#include <vector>\n\n";
  std::set<std::string> bases;
  for (auto s : order_)
    for (auto f : s.getFields())
      if (auto b = text(f.getProto().getAnnotations(), "rawTail"); !b.empty())
        bases.insert(b);
  for (auto& b : bases)
    o << "#include \"transport/" << b << ".hpp\"\n";
  o << "\nnamespace swarm::wire_msg {\n\n";
  for (auto s : order_)
    declare_struct(o, s);
  o << "/// The name of each kind of message, by its index in `message`.\n"
       "inline constexpr const char* message_names[] = {";
  auto kinds = variant_types(*root_);
  for (size_t i = 0; i < kinds.size(); ++i)
    o << (i % 4 == 0 ? "\n    " : " ") << "\"" << kinds[i] << "\""
      << (i + 1 < kinds.size() ? "," : "");
  o << "};\n\n";
  o << "/// Traffic classes: control and calls are never queued behind bulk object "
       "transfers.\nenum class lane : uint8_t {";
  bool first = true;
  for (auto e : lane_enum().getEnumerants()) {
    o << (first ? " " : ", ") << e.getProto().getName().cStr() << " = " << e.getOrdinal();
    first = false;
  }
  o << " };\n\n/// The lane a message travels on.\nlane lane_of(const message& m);\n\n"
       "/// Whether a message is latency-critical (its `controlWhenSet` field is set): "
       "its\n"
       "/// frame is marked urgent, and a receiver decodes it ahead of the frames "
       "received\n"
       "/// before it.\nbool urgent(const message& m);\n\n"
       "} // namespace swarm::wire_msg\n";
  return o.str();
}

} // namespace swarm::codegen
