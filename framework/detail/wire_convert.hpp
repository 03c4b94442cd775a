#pragma once

// Conversions between the runtime's values and the plain C++ wire messages of
// transport/wire_message.hpp, shared by the cluster node and its clients.

#include <cstdint>
#include <utility>
#include <vector>

#include "framework/detail/type_descriptor.hpp"
#include "base/error.hpp"
#include "framework/object_id.hpp"
#include "framework/resources.hpp"
#include "base/result.hpp"
#include "transport/wire_message.hpp"

namespace swarm::detail {

wire_msg::resource_list to_list(const resource_set& r);

/// The amounts as a resource set; an error for a negative or non-finite amount.
result<resource_set> from_list(const wire_msg::resource_list& l);

wire_msg::object_ref_id to_wire(const object_id& id);
object_id from_wire(const wire_msg::object_ref_id& id);

wire_msg::error_value to_wire(const error& e);
/// The error; codes this build does not know become `application_error`.
error from_wire(const wire_msg::error_value& e);

/// An object id as a map key.
inline std::pair<uint64_t, uint64_t> key_of(const object_id& id) {
  return {id.owner, id.seq};
}
inline std::pair<uint64_t, uint64_t> key_of(const wire_msg::object_ref_id& id) {
  return {id.owner, id.seq};
}

/// The value's encoding, what crosses nodes, written by the node `ctx` (may be null).
std::vector<uint8_t> encode(const boxed_value& v, codec_context* ctx = nullptr);

/// Decodes a value sent as a `want`, read by the node `ctx`; a type_mismatch error
/// naming both types otherwise.
result<boxed_value> decode(const wire_msg::value& v, const type_descriptor* want,
                           codec_context* ctx);

} // namespace swarm::detail
