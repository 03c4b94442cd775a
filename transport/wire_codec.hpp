#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "framework/result.hpp"
#include "transport/wire_message.hpp"

namespace swarm::wire_msg {

/// Bytes before a frame's payload: a little-endian u32 payload length and the lane byte.
inline constexpr size_t frame_header_bytes = 5;

/// Encodes a message as one frame: header, then the Cap'n Proto message in flat form.
std::vector<uint8_t> encode_frame(const message& m);

/// Splits a byte stream into frames and decodes them. A frame that is too large, not a
/// valid Cap'n Proto message, or on the wrong lane is an error that names the reason;
/// after one, the decoder refuses everything (the connection must be closed).
class frame_decoder {
public:
  explicit frame_decoder(size_t max_frame_bytes) : max_(max_frame_bytes) {}

  /// Appends received bytes and decodes every complete frame into `out`.
  result<void> feed(const uint8_t* data, size_t size, std::vector<message>& out);

  /// Bytes received but not yet part of a complete frame.
  size_t buffered() const noexcept { return buf_.size() - pos_; }

private:
  result<void> fail(std::string why);

  size_t max_;
  std::vector<uint8_t> buf_;
  size_t pos_ = 0;
  std::string broken_;
};

} // namespace swarm::wire_msg
