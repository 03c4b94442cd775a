#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/result.hpp"
#include "transport/wire_message.hpp"

namespace swarm::wire_msg {

/// Bytes before a frame's payload: a little-endian u32 payload length, the lane byte and
/// three zero bytes, so payloads stay 8-byte aligned and Cap'n Proto reads them in place.
inline constexpr size_t frame_header_bytes = 8;

/// A frame as the pieces it is sent from (scatter-gather), so that the bytes of a chunk
/// served from a value's memory go to the socket from there: `bytes[0, tail_at)`, then
/// the `tail_size` bytes at `tail`, then `bytes[tail_at, end)`.
struct frame_parts {
  std::vector<uint8_t> bytes;
  const uint8_t* tail = nullptr;
  size_t tail_size = 0;
  size_t tail_at = 0;
  /// Keeps `tail` alive while the frame is queued.
  std::shared_ptr<const void> keep;

  size_t size() const noexcept { return bytes.size() + tail_size; }
};

/// Encodes a message as one frame in pieces: a chunk's referenced bytes stay where they
/// are (see `frame_parts`); everything else is serialized once into `bytes`.
frame_parts encode_frame_parts(const message& m);

/// Encodes a message as one frame: header, then the Cap'n Proto message in flat form.
std::vector<uint8_t> encode_frame(const message& m);

/// Chunk payloads at least this large are read where they arrived: the decoded chunk
/// shares the decoder's buffer instead of copying its bytes out.
inline constexpr size_t shared_chunk_min = 64 << 10;

/// Splits a byte stream into frames and decodes them. A frame that is too large, not a
/// valid Cap'n Proto message, or on the wrong lane is an error that names the reason;
/// after one, the decoder refuses everything (the connection must be closed).
class frame_decoder {
public:
  explicit frame_decoder(size_t max_frame_bytes) : max_(max_frame_bytes) {}

  /// Frames over `max_frame_bytes` are refused, and each `commit` decodes at most
  /// `frames_per_commit` frames, leaving the rest buffered for the next one
  /// (`commit(0)`). Before a peer is trusted: a small limit, one frame at a time, so that
  /// the limit can be raised exactly after the frame that proved it.
  void set_limits(size_t max_frame_bytes, size_t frames_per_commit) {
    max_ = max_frame_bytes;
    batch_ = frames_per_commit;
  }

  /// Appends received bytes and decodes every complete frame into `out`.
  result<void> feed(const uint8_t* data, size_t size, std::vector<message>& out);

  /// Room for at least `want` more bytes (more when a large frame is under way, so it
  /// arrives in place): receive into it, then `commit` what arrived.
  std::pair<uint8_t*, size_t> prepare(size_t want);

  /// Takes `n` bytes written into `prepare`'s room and decodes every complete frame.
  result<void> commit(size_t n, std::vector<message>& out);

  /// Bytes received but not yet part of a complete frame.
  size_t buffered() const noexcept { return size_ - pos_; }

private:
  result<void> fail(std::string why);
  result<void> decode(std::vector<message>& out);
  // Bytes the frame at `pos_` still needs, from its header; 0 when unknown.
  size_t frame_remaining() const;

  size_t max_;
  size_t batch_ = static_cast<size_t>(-1);
  // A buffer of at least `cap` bytes: one the chunks lent it have let go of (its pages
  // already in memory), or a new one.
  std::shared_ptr<uint8_t[]> take_buffer(size_t& cap);
  // Keeps a buffer that chunks still read, to take again once they let go.
  void lend(std::shared_ptr<uint8_t[]> buf, size_t cap);

  // Not a vector: growing it must not zero what recv() overwrites anyway. Shared with the
  // large chunks decoded from it; while one lives, new bytes go to another buffer.
  std::shared_ptr<uint8_t[]> buf_;
  // Buffers lent to chunks, with their sizes; at most `max_lent`.
  static constexpr size_t max_lent = 4;
  std::vector<std::pair<std::shared_ptr<uint8_t[]>, size_t>> lent_;
  size_t cap_ = 0;
  size_t size_ = 0;
  size_t pos_ = 0;
  std::string broken_;
};

} // namespace swarm::wire_msg
