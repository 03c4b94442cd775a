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

/// Encodes a message as one frame: header, then the Cap'n Proto message in flat form.
std::vector<uint8_t> encode_frame(const message& m);

/// Splits a byte stream into frames and decodes them. A frame that is too large, not a
/// valid Cap'n Proto message, or on the wrong lane is an error that names the reason;
/// after one, the decoder refuses everything (the connection must be closed).
class frame_decoder {
public:
  explicit frame_decoder(size_t max_frame_bytes) : max_(max_frame_bytes) {}

  /// Frames over `max_frame_bytes` are refused, and each `commit` decodes at most
  /// `frames_per_commit` frames, leaving the rest buffered for the next one (`commit(0)`).
  /// Before a peer is trusted: a small limit, one frame at a time, so that the limit can
  /// be raised exactly after the frame that proved it.
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
  // Not a vector: growing it must not zero what recv() overwrites anyway.
  std::unique_ptr<uint8_t[]> buf_;
  size_t cap_ = 0;
  size_t size_ = 0;
  size_t pos_ = 0;
  std::string broken_;
};

} // namespace swarm::wire_msg
