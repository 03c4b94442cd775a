#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.hpp"
#include "transport/landing_table.hpp"
#include "transport/wire_message.hpp"

namespace swarm::wire_msg {

/// Bytes before a frame's payload: a little-endian u32 payload length, the lane byte, a
/// flags byte and two zero bytes, so payloads stay 8-byte aligned and Cap'n Proto reads
/// them in place.
inline constexpr size_t frame_header_bytes = 8;

/// The flag of a frame whose Cap'n Proto message is followed by raw bytes: a chunk's
/// payload, padded with zeros to whole words (so the next frame stays aligned). The
/// header then has a second word, the little-endian u64 length of that raw tail without
/// its padding, so a receiver knows where the payload goes before it arrives.
inline constexpr uint8_t raw_tail_flag = 1;
inline constexpr size_t raw_tail_header_bytes = 16;

/// The flag of a frame that holds a latency-critical message (`urgent`): a receiver
/// decodes it ahead of the frames received before it. Never with a raw tail.
inline constexpr uint8_t urgent_flag = 2;

/// A frame as the pieces it is sent from (scatter-gather): `bytes`, then the
/// `tail_size` bytes at `tail`, then `pad` zero bytes, so that a chunk served from a
/// value's memory goes to the socket from there.
struct frame_parts {
  std::vector<uint8_t> bytes;
  const uint8_t* tail = nullptr;
  size_t tail_size = 0;
  size_t pad = 0;
  /// Keeps `tail` alive while the frame is queued.
  std::shared_ptr<const void> keep;

  size_t size() const noexcept { return bytes.size() + tail_size + pad; }
};

/// Zero bytes that pad a raw tail of `n` bytes to whole words.
constexpr size_t raw_tail_padding(uint64_t n) noexcept {
  return static_cast<size_t>((8 - n % 8) % 8);
}

/// Encodes a message as one frame in pieces: a chunk's referenced bytes stay where they
/// are (see `frame_parts`); everything else is serialized once into `bytes`.
frame_parts encode_frame_parts(const message& m);

/// Encodes a message as one frame: header, then the Cap'n Proto message in flat form.
std::vector<uint8_t> encode_frame(const message& m);

/// Decodes the Cap'n Proto message of a frame: `bytes` (whole words) at `data`, 8-byte
/// aligned. An `invalid_argument` error saying why when it is malformed or of a kind
/// this build does not know.
result<message> decode_message(const uint8_t* data, size_t bytes);

/// Where a chunk's payload should be received, asked once its header is in: none when
/// nobody expects it (see `landing_table`).
using chunk_lander =
    std::function<std::optional<landing>(const object_chunk& header, uint64_t size)>;

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

  /// From now on, each `commit` decodes the urgent frames (`urgent_flag`) among the whole
  /// frames received first, then the others in the order they came. A peer's urgent
  /// messages stay in their order, and so do its others.
  void set_urgent_ahead(bool on) noexcept { urgent_ahead_ = on; }

  /// From now on, a chunk payload of `shared_chunk_min` bytes or more whose header
  /// arrives before it is offered to `lander`; where it gives a place, `prepare` hands
  /// out that place until the payload is in, and the chunk comes out `landed`.
  void set_lander(chunk_lander lander) { lander_ = std::move(lander); }

  /// Appends received bytes and decodes every complete frame into `out`.
  result<void> feed(const uint8_t* data, size_t size, std::vector<message>& out);

  /// Room for at least `want` more bytes (more when a large frame is under way, so it
  /// arrives in place; less when a landing chunk needs less): receive into it, then
  /// `commit` what arrived.
  std::pair<uint8_t*, size_t> prepare(size_t want);

  /// Takes `n` bytes written into `prepare`'s room and decodes every complete frame.
  result<void> commit(size_t n, std::vector<message>& out);

  /// Takes `n` bytes written into `prepare`'s room without decoding them yet, so that a
  /// later `commit` sees more frames at once (and decodes urgent ones among them
  /// first). False, and nothing taken, while a chunk lands: `commit` them instead.
  bool hold(size_t n) noexcept;

  /// Bytes received and not yet decoded (held, or not yet a complete frame).
  size_t buffered() const noexcept { return size_ - pos_; }

  /// Bytes of buffer it holds: the one it receives into and those it keeps to reuse
  /// once the chunks lent them let go.
  size_t held_bytes() const noexcept;

  /// Gives back the buffers kept for reuse and, when nothing is buffered, the one it
  /// receives into if over `keep` bytes (a chunk still reading one keeps it alive): for
  /// a connection gone quiet after a flood. Returns the bytes it no longer holds.
  size_t trim(size_t keep) noexcept;

private:
  result<void> fail(std::string why);
  result<void> decode(std::vector<message>& out);
  // Decodes the whole urgent frames after those already looked at, and notes them as
  // taken (`ahead_`), for `decode` to step over.
  result<void> decode_urgent(std::vector<message>& out);
  // The unread bytes that were at `from` are at the buffer's start now.
  void rebase(size_t from) noexcept;
  // Bytes the frame at `pos_` still needs, from its header; 0 when unknown.
  size_t frame_remaining() const;
  // Whether a raw tail of `raw` bytes may be received where a lander puts it.
  bool landable(uint64_t raw) const;
  // Offers chunk `c`, whose `raw`-byte payload starts at `at` in the buffer, to the
  // lander; true when the payload lands there from now on.
  bool try_land(object_chunk& c, size_t at, uint64_t raw);

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
  chunk_lander lander_;
  // The chunk whose payload is being received where the lander put it.
  struct landing_chunk {
    object_chunk chunk;
    landing where;
    uint64_t size = 0;
    uint64_t filled = 0;
  };
  std::optional<landing_chunk> landing_;
  // The lander was asked about the frame at `pos_` and gave no place.
  bool unlanded_ = false;
  // A chunk just landed: the next read is small (see `prepare`).
  bool peek_ = false;
  // Padding of a landed payload still to come, read into `padding_` and dropped.
  size_t skip_ = 0;
  std::array<uint8_t, 8> padding_{};
  bool urgent_ahead_ = false;
  // Urgent frames decoded ahead, as (offset, bytes), in order, all at or after `pos_`;
  // and where the frames not yet looked at for urgency begin.
  std::vector<std::pair<size_t, size_t>> ahead_;
  size_t scanned_ = 0;
};

} // namespace swarm::wire_msg
