#pragma once

// The payload of an object chunk (`wire_msg::object_chunk`, generated from wire.capnp):
// it travels after its message as the frame's raw tail, so the chunk holds it here, with
// what lets it be sent from, and received into, memory that is not its own.

#include <cstdint>
#include <memory>
#include <vector>

namespace swarm::wire_msg {

/// A chunk's bytes: `data`, or the `source_length` bytes at `source_data` kept alive by
/// `source`: on the sending side the value's own memory (sent from there), on the
/// receiving side the frame it arrived in (read there, not copied out) or, when
/// `landed`, the value it was pulled for.
struct chunk_payload {
  std::vector<uint8_t> data = {};
  std::shared_ptr<const void> source = {};
  const uint8_t* source_data = nullptr;
  uint64_t source_length = 0;
  /// Received straight into the destination its pull expected it at (a `landing_table`
  /// entry): its bytes are already where they belong.
  bool landed = false;

  /// The chunk's bytes, wherever they are.
  const uint8_t* bytes() const noexcept { return source ? source_data : data.data(); }
  uint64_t size() const noexcept { return source ? source_length : data.size(); }
};

} // namespace swarm::wire_msg
