#include "framework/detail/wire_convert.hpp"

namespace swarm::detail {

wire_msg::resource_list to_list(const resource_set& r) {
  return {r.amounts().begin(), r.amounts().end()};
}

result<resource_set> from_list(const wire_msg::resource_list& l) {
  resource_set out;
  try {
    for (auto& [name, amount] : l)
      out.set(name, amount);
  } catch (const failure& f) {
    return f.err();
  }
  return out;
}

wire_msg::object_ref_id to_wire(const object_id& id) {
  return {id.owner, id.seq};
}

object_id from_wire(const wire_msg::object_ref_id& id) {
  return {id.owner, id.seq};
}

std::vector<uint8_t> encode(const boxed_value& v, codec_context* ctx) {
  std::vector<uint8_t> out;
  out.reserve(v.type->byte_size(v.ptr.get()));
  v.type->encode(v.ptr.get(), out, ctx);
  return out;
}

result<boxed_value> decode(const wire_msg::value& v, const type_descriptor* want,
                           codec_context* ctx) {
  if (v.type_name != want->name)
    return error{errc::type_mismatch,
                 "expected a " + want->name + ", the other node sent a " + v.type_name};
  std::string why;
  auto p = want->decode(v.bytes.data(), v.bytes.size(), why, ctx);
  if (!p) return error{errc::type_mismatch, "malformed " + want->name + ": " + why};
  return boxed_value{std::move(p), want};
}

wire_msg::error_value to_wire(const error& e) {
  return {static_cast<uint16_t>(e.code), e.message};
}

error from_wire(const wire_msg::error_value& e) {
  auto code = e.code <= static_cast<uint16_t>(last_errc)
                  ? static_cast<errc>(e.code)
                  : errc::application_error;
  return {code, e.message};
}

} // namespace swarm::detail
