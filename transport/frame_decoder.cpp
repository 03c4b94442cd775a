// The frame decoder of wire_codec.hpp: splits a byte stream into frames, lands chunk
// payloads where they are expected, and decodes the messages.
#include "transport/wire_codec.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "base/ready_memory.hpp"

namespace swarm::wire_msg {

namespace {

// Cap'n Proto's word: frames hold whole words.
constexpr size_t word_bytes = 8;

enum class head_state { incomplete, ready, malformed };

// What a frame's header says: where its message starts, and its lengths.
struct frame_head {
  size_t head = frame_header_bytes;
  uint32_t len = 0;
  uint64_t raw = 0;
  uint8_t lane = 0;
  bool urgent = false;
};

uint64_t read_le(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

// Reads the header of a frame of which `avail` bytes are in, against the limit `max`.
head_state read_head(const uint8_t* h, size_t avail, size_t max, frame_head& f,
                     std::string& why) {
  if (avail < frame_header_bytes) return head_state::incomplete;
  f.len = static_cast<uint32_t>(read_le(h, 4));
  f.lane = h[4];
  if (f.len > max) {
    why = "frame of " + std::to_string(f.len) + " bytes exceeds the limit of " +
          std::to_string(max);
    return head_state::malformed;
  }
  if (f.len == 0 || f.len % word_bytes != 0) {
    why = "frame length " + std::to_string(f.len) + " is not a whole number of words";
    return head_state::malformed;
  }
  if (f.lane > static_cast<uint8_t>(lane::bulk)) {
    why = "unknown lane " + std::to_string(f.lane);
    return head_state::malformed;
  }
  if ((h[5] & ~(raw_tail_flag | urgent_flag)) != 0 || h[6] != 0 || h[7] != 0) {
    why = "frame header has unknown flags or padding that is not zero";
    return head_state::malformed;
  }
  f.urgent = (h[5] & urgent_flag) != 0;
  if (f.urgent && (h[5] & raw_tail_flag) != 0) {
    why = "an urgent frame has a raw tail";
    return head_state::malformed;
  }
  if ((h[5] & raw_tail_flag) == 0) return head_state::ready;
  if (avail < raw_tail_header_bytes) return head_state::incomplete;
  f.head = raw_tail_header_bytes;
  f.raw = read_le(h + frame_header_bytes, 8);
  if (f.raw == 0 || f.raw > max - f.len) {
    why = "raw tail of " + std::to_string(f.raw) + " bytes after a " +
          std::to_string(f.len) + "-byte message is empty or exceeds the limit of " +
          std::to_string(max);
    return head_state::malformed;
  }
  return head_state::ready;
}

// Bytes read after a chunk landed, enough for the next frame's header and message: its
// payload then lands too instead of arriving in the buffer.
constexpr size_t peek_bytes = 4096;

// Why a decoded message does not belong in the frame `f` it came in; empty when it does.
std::string misplaced(const message& m, const frame_head& f) {
  if (static_cast<uint8_t>(lane_of(m)) != f.lane)
    return "message on lane " + std::to_string(f.lane) + " belongs on lane " +
           std::to_string(static_cast<int>(lane_of(m)));
  if (urgent(m) != f.urgent)
    return f.urgent ? "a frame marked urgent holds a message that is not"
                    : "an urgent message came in a frame not marked urgent";
  return {};
}

} // namespace

result<void> frame_decoder::fail(std::string why) {
  broken_ = why;
  buf_.reset();
  cap_ = size_ = pos_ = scanned_ = 0;
  ahead_.clear();
  landing_.reset();
  return error{errc::invalid_argument, std::move(why)};
}

result<void> frame_decoder::feed(const uint8_t* data, size_t size,
                                 std::vector<message>& out) {
  size_t done = 0;
  do {
    auto [room, cap] = prepare(size - done);
    auto n = std::min(cap, size - done);
    if (n > 0) std::memcpy(room, data + done, n);
    if (auto ok = commit(n, out); !ok) return ok;
    done += n;
  } while (done < size);
  return {};
}

bool frame_decoder::landable(uint64_t raw) const {
  return lander_ && raw >= shared_chunk_min && !unlanded_;
}

size_t frame_decoder::frame_remaining() const {
  frame_head f;
  std::string why;
  if (read_head(buf_.get() + pos_, size_ - pos_, max_, f, why) != head_state::ready)
    return 0;
  // A payload that may land is not made room for.
  size_t total = f.head + f.len + (landable(f.raw) ? 0 : f.raw + raw_tail_padding(f.raw));
  return total > size_ - pos_ ? total - (size_ - pos_) : 0;
}

std::pair<uint8_t*, size_t> frame_decoder::prepare(size_t want) {
  if (landing_)
    return {landing_->where.at + landing_->filled, landing_->size - landing_->filled};
  // A landed payload's padding is read apart, so the buffer's frames stay aligned.
  if (skip_ > 0) return {padding_.data(), skip_};
  if (peek_) want = std::min(want, peek_bytes);
  want = std::max(want, frame_remaining());
  // A chunk decoded from the buffer still reads it: what is unread moves to a fresh one.
  bool shared = buf_ && buf_.use_count() > 1;
  if (shared || cap_ - size_ < want) {
    auto unread = size_ - pos_;
    if (!shared && pos_ > 0) {
      // Move the unread tail to the front (keeps it 8-byte aligned).
      std::memmove(buf_.get(), buf_.get() + pos_, unread);
      rebase(pos_);
      size_ = unread;
      pos_ = 0;
    }
    if (shared || cap_ - size_ < want) {
      size_t cap = shared ? unread + want : std::max(cap_ * 2, size_ + want);
      auto fresh = take_buffer(cap);
      if (unread > 0) std::memcpy(fresh.get(), buf_.get() + pos_, unread);
      if (shared) lend(std::move(buf_), cap_);
      buf_ = std::move(fresh);
      cap_ = cap;
      rebase(pos_);
      size_ = unread;
      pos_ = 0;
    }
  }
  return {buf_.get() + size_, peek_ ? std::min(cap_ - size_, want) : cap_ - size_};
}

std::shared_ptr<uint8_t[]> frame_decoder::take_buffer(size_t& cap) {
  for (auto i = lent_.begin(); i != lent_.end(); ++i)
    if (i->first.use_count() == 1 && i->second >= cap) {
      auto buf = std::move(i->first);
      cap = i->second;
      lent_.erase(i);
      return buf;
    }
  std::shared_ptr<uint8_t[]> buf{new uint8_t[cap]};
  ready_memory(buf.get(), cap);
  return buf;
}

void frame_decoder::lend(std::shared_ptr<uint8_t[]> buf, size_t cap) {
  // A frame larger than a chunk is rare: its buffer goes with its chunk.
  if (cap > (16u << 20)) return;
  if (lent_.size() >= max_lent) {
    // Make room: forget one no chunk reads any more, else the oldest.
    auto idle = std::find_if(lent_.begin(), lent_.end(),
                             [](auto& l) { return l.first.use_count() == 1; });
    lent_.erase(idle != lent_.end() ? idle : lent_.begin());
  }
  lent_.emplace_back(std::move(buf), cap);
}

size_t frame_decoder::held_bytes() const noexcept {
  auto held = cap_;
  for (auto& l : lent_)
    held += l.second;
  return held;
}

size_t frame_decoder::trim(size_t keep) noexcept {
  auto before = held_bytes();
  lent_.clear();
  if (!landing_ && skip_ == 0 && size_ == pos_ && cap_ > keep) {
    buf_.reset();
    cap_ = size_ = pos_ = scanned_ = 0;
  }
  return before - held_bytes();
}

void frame_decoder::rebase(size_t from) noexcept {
  for (auto& a : ahead_)
    a.first -= from;
  scanned_ = scanned_ > from ? scanned_ - from : 0;
}

bool frame_decoder::hold(size_t n) noexcept {
  if (landing_ || skip_ > 0) return false;
  if (n > 0) peek_ = false;
  size_ += n;
  return true;
}

result<void> frame_decoder::commit(size_t n, std::vector<message>& out) {
  if (landing_) {
    landing_->filled += n;
    if (landing_->filled < landing_->size) return {};
    auto& c = landing_->chunk;
    c.source = std::move(landing_->where.keep);
    c.source_data = landing_->where.at;
    c.source_length = landing_->size;
    c.landed = true;
    out.push_back(std::move(c));
    skip_ = raw_tail_padding(landing_->size);
    landing_.reset();
    peek_ = true;
    return {};
  }
  if (skip_ > 0) {
    skip_ -= std::min(skip_, n);
    return {};
  }
  if (n > 0) peek_ = false;
  size_ += n;
  auto ok = decode(out);
  if (pos_ == size_) {
    pos_ = size_ = scanned_ = 0;
    // A large frame's room is given back once it is decoded, and a buffer a chunk
    // still reads is left to it.
    if (buf_.use_count() > 1) {
      lend(std::move(buf_), cap_);
      cap_ = 0;
    } else if (cap_ > (16u << 20)) {
      buf_.reset();
      cap_ = 0;
    }
  }
  return ok;
}

bool frame_decoder::try_land(object_chunk& c, size_t at, uint64_t raw) {
  auto where = lander_(c, raw);
  if (!where || where->at == nullptr || where->size < raw) return false;
  // What arrived of the payload with its header goes there too.
  auto have = size_ - at;
  // Less than `raw`: none of its padding is in.
  if (have > 0) std::memcpy(where->at, buf_.get() + at, have);
  landing_ = landing_chunk{std::move(c), std::move(*where), raw, have};
  pos_ = size_;
  return true;
}

result<void> frame_decoder::decode_urgent(std::vector<message>& out) {
  auto at = std::max(scanned_, pos_);
  for (;;) {
    frame_head f;
    std::string why;
    auto avail = size_ - at;
    // A malformed frame fails when its turn comes, after those before it.
    if (read_head(buf_.get() + at, avail, max_, f, why) != head_state::ready) break;
    auto total = f.head + f.len + f.raw + raw_tail_padding(f.raw);
    if (avail < total) break;
    if (f.urgent) {
      auto read = decode_message(buf_.get() + at + f.head, f.len);
      if (!read) return fail(read.err().message);
      if (auto wrong = misplaced(*read, f); !wrong.empty()) return fail(wrong);
      out.push_back(std::move(*read));
      ahead_.emplace_back(at, total);
    }
    at += total;
  }
  scanned_ = at;
  return {};
}

result<void> frame_decoder::decode(std::vector<message>& out) {
  if (!broken_.empty())
    return error{errc::invalid_argument, "connection already failed: " + broken_};
  if (urgent_ahead_ && !landing_ && buf_)
    if (auto ok = decode_urgent(out); !ok) return ok;
  for (size_t decoded = 0; decoded < batch_ && !landing_; ++decoded) {
    // Frames decoded ahead are stepped over.
    while (!ahead_.empty() && ahead_.front().first == pos_) {
      pos_ += ahead_.front().second;
      ahead_.erase(ahead_.begin());
    }
    frame_head f;
    std::string why;
    const uint8_t* h = buf_.get() + pos_;
    auto avail = size_ - pos_;
    auto state = read_head(h, avail, max_, f, why);
    if (state == head_state::malformed) return fail(why);
    if (state == head_state::incomplete || avail < f.head + f.len) break;
    auto pad = raw_tail_padding(f.raw);
    bool whole = avail >= f.head + f.len + f.raw + pad;
    // A payload lands only while some of it is still to come.
    if (!whole && (avail >= f.head + f.len + f.raw || !landable(f.raw))) break;
    // Read in place: frames are whole words, so every message starts 8-byte aligned.
    auto read = decode_message(h + f.head, f.len);
    if (!read) return fail(read.err().message);
    auto& m = *read;
    if (auto wrong = misplaced(m, f); !wrong.empty()) return fail(wrong);
    auto* chunk = std::get_if<object_chunk>(&m);
    if (f.raw > 0 && chunk == nullptr)
      return fail("a raw tail follows a message that is not a chunk");
    auto tail_at = pos_ + f.head + f.len;
    if (!whole) {
      // Where nobody expects it, it arrives in the buffer, made room for.
      if (!try_land(*chunk, tail_at, f.raw)) unlanded_ = true;
      break;
    }
    if (f.raw >= shared_chunk_min) {
      chunk->source = std::shared_ptr<const void>{buf_, buf_.get()};
      chunk->source_data = buf_.get() + tail_at;
      chunk->source_length = f.raw;
    } else if (f.raw > 0) {
      chunk->data.assign(buf_.get() + tail_at, buf_.get() + tail_at + f.raw);
    }
    pos_ = tail_at + f.raw + pad;
    unlanded_ = false;
    out.push_back(std::move(m));
  }
  return {};
}

} // namespace swarm::wire_msg
