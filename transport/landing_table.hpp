#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>

#include "transport/wire_message.hpp"

namespace swarm::wire_msg {

/// Chunk payloads at least this large are read where they arrived: the decoded chunk
/// shares the decoder's buffer instead of copying its bytes out, or is received straight
/// where a `landing_table` expects it. Smaller ones are copied out.
inline constexpr size_t shared_chunk_min = 64 << 10;

/// Memory a chunk's payload is received into: `size` bytes at `at`, kept alive by `keep`.
struct landing {
  uint8_t* at = nullptr;
  uint64_t size = 0;
  std::shared_ptr<void> keep;
};

/// Where a node's pulls expect their chunks, so that the I/O thread receives a chunk's
/// payload straight into the value being pulled, at its offset, instead of into a frame
/// buffer it is then copied out of. Like a registered DMA region, it is shared by two
/// threads on purpose: the I/O thread must know where bytes go before it reads them, and
/// asking the object manager by message for each chunk would stall the socket.
///
/// The object manager awaits each chunk it asked for once the value exists; the I/O
/// thread `claim`s the entry when the chunk's header arrives, so an entry takes at most
/// one chunk, and only from the node it was asked of; a chunk nobody expects is read
/// into a buffer as before. The manager `forget`s an entry whose chunk came that way,
/// and `drop`s every entry of a pull that ended.
class landing_table {
public:
  /// The chunk of `id` at `offset` that `peer` was asked for goes to `where`.
  void await_chunk(const std::string& peer, const object_ref_id& id, uint64_t offset,
                   landing where);

  /// Takes the place expected for `size` bytes of `id` at `offset` from `peer`: none
  /// when nothing is expected there from that peer, or the chunk does not fit.
  std::optional<landing> claim(const std::string& peer, const object_ref_id& id,
                               uint64_t offset, uint64_t size);

  /// The chunk of `id` at `offset` arrived another way: its place is no longer expected.
  void forget(const object_ref_id& id, uint64_t offset);

  /// The pull of `id` ended: none of its chunks is expected any more.
  void drop(const object_ref_id& id);

  /// Places expected (tests).
  size_t size() const;

private:
  using key = std::tuple<uint64_t, uint64_t, uint64_t>; // owner, seq, offset

  mutable std::mutex mtx_;
  std::map<key, std::pair<std::string, landing>> expected_;
};

} // namespace swarm::wire_msg
