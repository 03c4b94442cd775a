// The encoder, decoder and lanes: wire_message.cpp and wire_envelope.hpp.

#include "transport/codegen/generator.hpp"

#include <sstream>

namespace swarm::codegen {

void generator::put_list(std::ostream& o, Type t, const std::string& list,
                         const std::string& v, int depth, const std::string& in) const {
  auto e = t.asList().getElementType();
  auto i = "i" + std::to_string(depth);
  o << in << "for (unsigned " << i << " = 0; " << i << " < " << list << ".size(); ++" << i
    << ")\n";
  auto at = v + "[" + i + "]";
  if (e.isList()) {
    auto sub = "l" + std::to_string(depth + 1);
    o << in << "  {\n"
      << in << "    auto " << sub << " = " << list << ".init(" << i << ", size_of(" << at
      << ".size()));\n";
    put_list(o, e, sub, at, depth + 1, in + "    ");
    o << in << "  }\n";
  } else if (e.isStruct()) {
    o << in << "  put_" << fn_name(e.asStruct()) << "(" << list << "[" << i << "], " << at
      << ");\n";
  } else if (e.isData()) {
    o << in << "  " << list << ".set(" << i << ", bytes_of(" << at << "));\n";
  } else {
    o << in << "  " << list << ".set(" << i << ", " << at << ");\n";
  }
}

void generator::put_field(std::ostream& o, field f, const std::string& v) const {
  auto as = f.getProto().getAnnotations();
  auto acc = cap(f.getProto().getName().cStr());
  if (!text(as, "rawTail").empty()) return;
  if (!texts(as, "enumeration").empty()) {
    o << "  b.set" << acc << "(static_cast<uint8_t>(" << v << "));\n";
    return;
  }
  if (!text(as, "only").empty()) {
    o << "  put_" << alternative_of(only_member(f)) << "(b.init" << acc << "(), " << v
      << ");\n";
    return;
  }
  auto t = f.getType();
  if (t.isList()) {
    o << "  {\n    auto l0 = b.init" << acc << "(size_of(" << v << ".size()));\n";
    put_list(o, t, "l0", v, 0, "    ");
    o << "  }\n";
  } else if (t.isStruct()) {
    o << "  put_" << fn_name(t.asStruct()) << "(b.init" << acc << "(), " << v << ");\n";
  } else if (t.isData()) {
    o << "  b.set" << acc << "(bytes_of(" << v << "));\n";
  } else {
    o << "  b.set" << acc << "(" << v << ");\n";
  }
}

void generator::define_put(std::ostream& o, StructSchema s) const {
  auto fn = fn_name(s);
  auto wt = capnp_type(s);
  if (is_pair(s)) {
    auto fs = s.getFields();
    o << "void put_" << fn << "(" << wt << "::Builder b, const " << struct_name(s)
      << "::value_type& m) {\n";
    put_field(o, fs[0], "m.first");
    put_field(o, fs[1], "m.second");
    o << "}\n\n";
    return;
  }
  auto members = members_of(s);
  if (is_variant(s)) {
    for (auto m : members) {
      auto alt = alternative_of(m);
      if (alt.empty()) continue;
      o << "void put_" << alt << "(" << wt << "::Builder b, const " << alt << "& m) {\n";
      put_field(o, m, "m." + field_name(m));
      for (auto f : s.getNonUnionFields())
        put_field(o, f, "m." + field_name(f));
      o << "}\n\n";
    }
    o << "void put_" << fn << "(" << wt << "::Builder b, const " << struct_name(s)
      << "& m) {\n  switch (m.index()) {\n";
    for (size_t i = 0; i < members.size(); ++i) {
      auto m = members[i];
      auto acc = cap(m.getProto().getName().cStr());
      auto got = "std::get<" + std::to_string(i) + ">(m)";
      auto alt = alternative_of(m);
      o << "  case " << i << ":\n";
      if (!alt.empty())
        o << "    put_" << alt << "(b, " << got << ");\n";
      else if (m.getType().isStruct())
        o << "    put_" << fn_name(m.getType().asStruct()) << "(b.init" << acc << "(), "
          << got << ");\n";
      else
        fail(short_name(s) + "." + m.getProto().getName().cStr() +
             ": a variant's members are structs");
      o << "    break;\n";
    }
    o << "  }\n}\n\n";
    return;
  }
  o << "void put_" << fn << "(" << wt << "::Builder b, const " << struct_name(s)
    << "& m) {\n";
  auto union_name = text(s.getProto().getAnnotations(), "unionField");
  if (!members.empty() && union_name.empty())
    fail(short_name(s) + ": a union beside fields needs unionField");
  for (auto f : s.getNonUnionFields())
    put_field(o, f, "m." + field_name(f));
  if (!members.empty()) {
    o << "  switch (m." << union_name << ".index()) {\n";
    for (size_t i = 0; i < members.size(); ++i) {
      auto m = members[i];
      if (!m.getType().isStruct() || !alternative_of(m).empty())
        fail(short_name(s) + "." + m.getProto().getName().cStr() +
             ": a unionField's members are plain structs");
      o << "  case " << i << ":\n    put_" << fn_name(m.getType().asStruct()) << "(b.init"
        << cap(m.getProto().getName().cStr()) << "(), std::get<" << i << ">(m."
        << union_name << "));\n    break;\n";
    }
    o << "  }\n";
  }
  o << "}\n\n";
}

// --- the decoder ---

std::string generator::read_value(Type t, const std::string& r) const {
  if (t.isStruct()) return "get_" + fn_name(t.asStruct()) + "(" + r + ")";
  if (t.isData()) return "to_vector(" + r + ")";
  if (t.which() == sch::Type::TEXT) return "text_of(" + r + ")";
  return r;
}

void generator::get_list(std::ostream& o, Type t, const std::string& reader,
                         const std::string& into, int depth,
                         const std::string& in) const {
  auto e = t.asList().getElementType();
  auto l = "r" + std::to_string(depth);
  auto x = "e" + std::to_string(depth);
  o << in << "auto " << l << " = " << reader << ";\n";
  o << in << into << ".reserve(" << l << ".size());\n";
  o << in << "for (auto " << x << " : " << l << ")";
  if (e.isList()) {
    auto sub = "v" + std::to_string(depth + 1);
    o << " {\n" << in << "  " << cxx(e) << " " << sub << ";\n";
    get_list(o, e, x, sub, depth + 1, in + "  ");
    o << in << "  " << into << ".push_back(std::move(" << sub << "));\n" << in << "}\n";
  } else {
    o << "\n" << in << "  " << into << ".push_back(" << read_value(e, x) << ");\n";
  }
}

void generator::get_field(std::ostream& o, field f, const std::string& owner) const {
  auto as = f.getProto().getAnnotations();
  auto acc = cap(f.getProto().getName().cStr());
  auto name = field_name(f);
  auto what = owner + "." + name;
  if (!text(as, "rawTail").empty()) {
    o << "  if (r.has" << acc << "())\n    throw std::invalid_argument(\"" << what
      << " travels as the frame's raw tail, not in its message\");\n";
    return;
  }
  if (auto enums = texts(as, "enumeration"); !enums.empty()) {
    o << "  if (r.get" << acc << "() >= " << enums.size()
      << ")\n    throw std::invalid_argument(\"unknown " << what
      << " \" + std::to_string(r.get" << acc << "()));\n";
    o << "  m." << name << " = static_cast<" << owner << "::" << field_type(f)
      << ">(r.get" << acc << "());\n";
    return;
  }
  if (auto only = text(as, "only"); !only.empty()) {
    auto m = only_member(f);
    o << "  if (!r.get" << acc << "().is" << cap(m.getProto().getName().cStr())
      << "())\n    throw std::invalid_argument(\"" << what << " holds no " << only
      << "\");\n";
    o << "  m." << name << " = get_" << alternative_of(m) << "(r.get" << acc << "());\n";
    return;
  }
  auto t = f.getType();
  if (t.isList()) {
    o << "  {\n";
    get_list(o, t, "r.get" + acc + "()", "m." + name, 0, "    ");
    o << "  }\n";
    return;
  }
  o << "  m." << name << " = " << read_value(t, "r.get" + acc + "()") << ";\n";
}

void generator::define_get(std::ostream& o, StructSchema s) const {
  auto fn = fn_name(s);
  auto wt = capnp_type(s);
  auto name = struct_name(s);
  if (is_pair(s)) {
    auto fs = s.getFields();
    o << name << "::value_type get_" << fn << "(" << wt << "::Reader r) {\n  return {"
      << read_value(fs[0].getType(),
                    "r.get" + cap(fs[0].getProto().getName().cStr()) + "()")
      << ", "
      << read_value(fs[1].getType(),
                    "r.get" + cap(fs[1].getProto().getName().cStr()) + "()")
      << "};\n}\n\n";
    return;
  }
  auto members = members_of(s);
  auto unknown = [&](const std::string& what) {
    return "  throw std::invalid_argument(\"unknown " + what +
           " kind \" + std::to_string(static_cast<unsigned>(r.which())));\n";
  };
  if (is_variant(s)) {
    for (auto m : members) {
      auto alt = alternative_of(m);
      if (alt.empty()) continue;
      o << alt << " get_" << alt << "(" << wt << "::Reader r) {\n  " << alt << " m;\n";
      get_field(o, m, alt);
      for (auto f : s.getNonUnionFields())
        get_field(o, f, alt);
      o << "  return m;\n}\n\n";
    }
    o << name << " get_" << fn << "(" << wt << "::Reader r) {\n  switch (r.which()) {\n";
    for (size_t i = 0; i < members.size(); ++i) {
      auto m = members[i];
      auto alt = alternative_of(m);
      o << "  case " << wt << "::" << upper_snake(m.getProto().getName().cStr())
        << ":\n    return " << name << "{std::in_place_index<" << i << ">, "
        << (alt.empty() ? read_value(m.getType(),
                                     "r.get" + cap(m.getProto().getName().cStr()) + "()")
                        : "get_" + alt + "(r)")
        << "};\n";
    }
    o << "  }\n  // A member from a newer peer that this build does not know.\n"
      << unknown(name) << "}\n\n";
    return;
  }
  o << name << " get_" << fn << "(" << wt << "::Reader r) {\n  " << name << " m;\n";
  for (auto f : s.getNonUnionFields())
    get_field(o, f, name);
  if (!members.empty()) {
    auto u = text(s.getProto().getAnnotations(), "unionField");
    o << "  switch (r.which()) {\n";
    for (size_t i = 0; i < members.size(); ++i) {
      auto m = members[i];
      o << "  case " << wt << "::" << upper_snake(m.getProto().getName().cStr())
        << ":\n    m." << u << ".emplace<" << i << ">("
        << read_value(m.getType(), "r.get" + cap(m.getProto().getName().cStr()) + "()")
        << ");\n    return m;\n";
    }
    o << "  }\n" << unknown(name + "." + u);
  } else {
    o << "  return m;\n";
  }
  o << "}\n\n";
}

std::string generator::source() const {
  std::ostringstream o;
  o << "// Generated from transport/wire.capnp by transport/codegen/capnpc_swarm: do "
       "not\n"
       "// edit. Each message's Cap'n Proto encoder and decoder, and its lane.\n\n"
       "#include \"transport/wire_envelope.hpp\"\n\n"
       "#include <stdexcept>\n#include <string>\n\n"
       "namespace swarm::wire_msg::generated {\n\nnamespace {\n\n"
       "kj::ArrayPtr<const kj::byte> bytes_of(const std::vector<uint8_t>& v) {\n"
       "  return {reinterpret_cast<const kj::byte*>(v.data()), v.size()};\n}\n\n"
       "std::vector<uint8_t> to_vector(capnp::Data::Reader d) { return {d.begin(), "
       "d.end()}; "
       "}\n\n"
       "std::string text_of(capnp::Text::Reader t) { return {t.begin(), t.end()}; }\n\n"
       "unsigned size_of(size_t n) { return static_cast<unsigned>(n); }\n\n";
  // Declared first, so that each may call any other.
  for (auto s : order_) {
    auto wt = capnp_type(s);
    auto fn = fn_name(s);
    auto name = struct_name(s);
    if (s.getProto().getId() == root_->getProto().getId()) continue;
    auto type = is_pair(s) ? name + "::value_type" : name;
    o << "void put_" << fn << "(" << wt << "::Builder b, const " << type << "& m);\n";
    o << type << " get_" << fn << "(" << wt << "::Reader r);\n";
    if (is_variant(s))
      for (auto m : members_of(s))
        if (auto alt = alternative_of(m); !alt.empty()) {
          o << "void put_" << alt << "(" << wt << "::Builder b, const " << alt
            << "& m);\n";
          o << alt << " get_" << alt << "(" << wt << "::Reader r);\n";
        }
  }
  o << "\n";
  for (auto s : order_) {
    if (s.getProto().getId() == root_->getProto().getId()) continue;
    define_put(o, s);
    define_get(o, s);
  }
  o << "} // namespace\n\n";
  define_put(o, *root_);
  define_get(o, *root_);
  o << "} // namespace swarm::wire_msg::generated\n\nnamespace swarm::wire_msg {\n\n"
       "lane lane_of(const message& m) {\n  switch (m.index()) {\n";
  auto members = members_of(*root_);
  for (size_t i = 0; i < members.size(); ++i) {
    auto s = members[i].getType().asStruct();
    std::string lane = "control";
    if (auto v = find(s.getProto().getAnnotations(), "lane"))
      lane = lane_enum().getEnumerants()[v->getEnum()].getProto().getName().cStr();
    std::string when;
    for (auto f : s.getFields())
      if (has(f.getProto().getAnnotations(), "controlWhenSet"))
        when = "std::get<" + std::to_string(i) + ">(m)." + field_name(f);
    if (lane == "control") continue;
    o << "  case " << i << ":\n    return ";
    if (!when.empty()) o << when << " ? lane::control : ";
    o << "lane::" << lane << ";\n";
  }
  o << "  default:\n    return lane::control;\n  }\n}\n\n";
  o << "bool urgent(const message& m) {\n  switch (m.index()) {\n";
  for (size_t i = 0; i < members.size(); ++i)
    for (auto f : members[i].getType().asStruct().getFields())
      if (has(f.getProto().getAnnotations(), "controlWhenSet"))
        o << "  case " << i << ":\n    return std::get<" << i << ">(m)." << field_name(f)
          << ";\n";
  o << "  default:\n    return false;\n  }\n}\n\n} // namespace swarm::wire_msg\n";
  return o.str();
}

std::string generator::envelope_header() const {
  std::ostringstream o;
  auto wt = capnp_type(*root_);
  o << "#pragma once\n\n"
       "// Generated from transport/wire.capnp by transport/codegen/capnpc_swarm: do "
       "not\n"
       "// edit. Between the C++ messages and their Cap'n Proto envelope; for "
       "transport/'s\n"
       "// codec only.\n\n"
       "#include \"transport/wire.capnp.h\"\n#include \"transport/wire_message.hpp\"\n\n"
       "namespace swarm::wire_msg::generated {\n\n"
       "/// Writes `m` into an envelope.\n"
       "void put_message("
    << wt << "::Builder b, const message& m);\n\n"
    << "/// Reads an envelope; std::invalid_argument naming what is wrong when it holds "
       "a\n"
       "/// message or value this build does not know.\n"
       "message get_message("
    << wt << "::Reader r);\n\n} // namespace swarm::wire_msg::generated\n";
  return o.str();
}

} // namespace swarm::codegen
