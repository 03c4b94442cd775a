#pragma once

// A pull of an object from other nodes, as the object manager runs it: where it asks
// for chunks, what came in, and the value they are placed into.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/result.hpp"
#include "framework/detail/object_slot.hpp"
#include "framework/detail/type_descriptor.hpp"
#include "transport/codec.hpp"
#include "transport/wire_message.hpp"

namespace swarm::actors {

/// A node a pull may ask for chunks. `whole`: named by the reference, it has the whole
/// object; otherwise another reader named by a holder, which may still be getting it.
struct pull_source {
  std::string node;
  bool whole = true;
};

struct asked_chunk {
  uint64_t length = 0;
  std::string from;
  bool whole = true; // asked of a source with the whole object
};

/// A laid-out value whose memory the layout points into, kept alive with it: what a chunk
/// served from a pulled copy is sent from.
struct served_layout {
  std::shared_ptr<const void> value;
  bulk_layout layout;
  const detail::type_descriptor* type = nullptr; // null: the layout's bytes (a replica)
};

/// A pull under way: its sources, the chunks asked and received, its readers, and the
/// value being made.
struct pull_state {
  using value_cb = std::function<void(result<detail::boxed_value>)>;

  std::vector<pull_source> sources;
  std::map<std::string, uint64_t> bytes_from; // for the timeline: a row per source
  size_t turn = 0; // the source the next chunk is asked of, round robin
  int64_t started_us = 0;
  const detail::type_descriptor* type = nullptr;
  uint64_t total = 0;
  uint64_t received = 0;
  uint64_t next_offset = 0;
  size_t in_flight = 0;
  double weight = 1; // the largest of its readers' (see `pull_weight`)
  std::map<uint64_t, asked_chunk> asked; // chunks asked for and not yet in, by offset
  std::map<uint64_t, uint64_t> have;     // bytes received: start -> end, merged
  bool freed = false;                    // its owner freed it meanwhile: not to be kept
  // The node asked to share it (a device buffer mapped, see `device_lending`): no bytes
  // are asked for until it answered.
  std::string sharing;
  // Each reader, and the type it reads as (null: the layout's bytes, for a replica).
  std::vector<std::pair<const detail::type_descriptor*, value_cb>> waiters;
  // Chunks other readers asked this node for before they came here, and the layout
  // they are served from once the value is made.
  std::vector<std::pair<std::string, wire_msg::object_pull>> parked;
  std::shared_ptr<served_layout> serving;
  // Before the value can be made (its head incomplete): the bytes received from offset
  // 0 on without a gap, and the chunks after a gap, by offset.
  std::vector<uint8_t> prefix;
  std::map<uint64_t, wire_msg::object_chunk> early;
  // Once the head is in: the value, and where each of its blocks' bytes go (from
  // `head_size` on, in order).
  std::shared_ptr<void> value;
  // The bytes counted against the store, handed to the value when it is whole.
  std::unique_ptr<detail::store_lease> lease;
  uint64_t head_size = 0;
  std::vector<std::pair<uint8_t*, size_t>> dests;
  // What runs as parts of a block arrive (a device buffer's bytes written to a device as
  // they come), by the block's index in `dests`.
  std::vector<std::pair<size_t, detail::block_landed>> landed;

  /// Bytes received from `offset` on without a gap (none before the value is made).
  uint64_t available(uint64_t offset) const;
  /// Whether the bytes at `offset` were asked of a source with the whole object: a
  /// reader asking for them here may wait for them (they will come, or the pull fails),
  /// and no two readers wait for each other.
  bool coming_whole(uint64_t offset) const;
  /// Copies `data`, the `n` bytes at `offset` of the layout, into the value's blocks.
  void place(uint64_t offset, const uint8_t* data, uint64_t n);
  /// Records bytes [offset, offset + n) as received.
  void mark(uint64_t offset, uint64_t n);
  /// Bytes [offset, offset + n) of the layout are in the value's blocks: runs what
  /// `landed` asks for them.
  void arrived(uint64_t offset, uint64_t n) const;
};

/// `v` laid out to be served: a value of `type`, written by the node `ctx` (the refs in
/// it lent), or (`type` null) a replica's bytes, a `std::vector<uint8_t>` holding its
/// whole layout.
std::shared_ptr<served_layout> lay_out(std::shared_ptr<const void> v,
                                       const detail::type_descriptor* type,
                                       codec_context* ctx);

/// Copies `data`, the `n` bytes at `offset` of a layout whose head is `head_size` bytes,
/// into the blocks a skeleton made of it points to (`dests`, in order).
void place_blocks(uint64_t head_size,
                  const std::vector<std::pair<uint8_t*, size_t>>& dests, uint64_t offset,
                  const uint8_t* data, uint64_t n);

/// Where the bytes from `offset` of `l` lie: in its head or in one of its blocks, up to
/// `n` of them but not past that piece's end. {nullptr, 0} past the end of `l`.
std::pair<const uint8_t*, uint64_t> piece_at(const bulk_layout& l, uint64_t offset,
                                             uint64_t n);

} // namespace swarm::actors
