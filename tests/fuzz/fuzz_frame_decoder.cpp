// Fuzzes wire_msg::frame_decoder with a byte stream split into chunks.
//
// Input: one options byte, then the stream. Options: bits 0-5 choose the chunk size
// (1 to 64 bytes, or the whole stream at once when 63), bit 6 decodes one frame per
// commit, bit 7 receives through prepare/commit instead of feed.
//
// Checked: the decoder never crashes or throws; chunking and batching do not change what
// is decoded or whether the stream fails; every decoded message re-encodes to a frame
// that decodes to exactly one message which re-encodes to the same bytes; with urgent
// frames decoded ahead (the chunks held, then decoded at once, as a reader does while
// its socket has more), whether the stream fails is the same, and the urgent messages
// and the others each come in their own order.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "transport/wire_codec.hpp"

namespace {

using namespace swarm::wire_msg;

// Large enough that the fuzzer's inputs are never refused for size alone.
constexpr size_t max_frame = 1 << 20;

void check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz_frame_decoder: invariant broken: %s\n", what);
  std::abort();
}

struct decoded {
  std::vector<message> messages;
  bool failed = false;
};

// Feeds `data` in chunks of `step` bytes (0: all at once). `urgent_ahead`: urgent frames
// go first, and each chunk is held undecoded until the last.
decoded decode_stream(const uint8_t* data, size_t size, size_t step, bool one_per_commit,
                      bool use_prepare, bool urgent_ahead = false) {
  frame_decoder dec{max_frame};
  if (one_per_commit) dec.set_limits(max_frame, 1);
  dec.set_urgent_ahead(urgent_ahead);
  decoded out;
  if (step == 0) step = size > 0 ? size : 1;
  for (size_t at = 0; at < size && !out.failed; at += step) {
    size_t n = std::min(step, size - at);
    swarm::result<void> ok;
    if (urgent_ahead && at + n < size) {
      auto [room, cap] = dec.prepare(n);
      check(cap >= n, "prepare gave less room than asked for");
      std::memcpy(room, data + at, n);
      check(dec.hold(n), "no chunk lands, yet bytes could not be held");
      continue;
    }
    if (use_prepare || urgent_ahead) {
      auto [room, cap] = dec.prepare(n);
      check(cap >= n, "prepare gave less room than asked for");
      std::memcpy(room, data + at, n);
      ok = dec.commit(n, out.messages);
    } else {
      ok = dec.feed(data + at, n, out.messages);
    }
    // With one frame per commit, the rest waits for commit(0).
    while (ok && one_per_commit) {
      size_t before = out.messages.size();
      ok = dec.commit(0, out.messages);
      if (out.messages.size() == before) break;
    }
    out.failed = !ok;
  }
  if (out.failed) {
    std::vector<message> more;
    check(!dec.feed(data, size, more) && more.empty(),
          "a failed decoder accepted more bytes");
  }
  return out;
}

void check_reencoding(const message& m) {
  auto frame = encode_frame(m);
  check(frame.size() >= frame_header_bytes && frame.size() <= max_frame,
        "re-encoded frame has an impossible size");
  frame_decoder dec{max_frame};
  std::vector<message> again;
  check(static_cast<bool>(dec.feed(frame.data(), frame.size(), again)),
        "a re-encoded message does not decode");
  check(again.size() == 1 && dec.buffered() == 0,
        "a re-encoded message is not exactly one frame");
  check(again.front().index() == m.index(), "re-encoding changed the message kind");
  check(encode_frame(again.front()) == frame,
        "re-encode, decode, re-encode is not byte-identical");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  uint8_t opts = data[0];
  ++data;
  --size;
  size_t step = (opts & 0x3f) == 0x3f ? 0 : 1 + (opts & 0x3f);
  bool one_per_commit = (opts & 0x40) != 0;
  bool use_prepare = (opts & 0x80) != 0;

  auto chunked = decode_stream(data, size, step, one_per_commit, use_prepare);
  auto whole = decode_stream(data, size, 0, false, false);
  check(chunked.failed == whole.failed, "chunking changed whether the stream fails");
  check(chunked.messages.size() == whole.messages.size(),
        "chunking changed the number of messages");
  for (size_t i = 0; i < whole.messages.size(); ++i) {
    check(encode_frame(chunked.messages[i]) == encode_frame(whole.messages[i]),
          "chunking changed a message");
    check_reencoding(whole.messages[i]);
  }
  auto ahead = decode_stream(data, size, step, one_per_commit, use_prepare, true);
  check(ahead.failed == whole.failed, "urgent frames ahead changed whether it fails");
  if (!whole.failed) {
    check(ahead.messages.size() == whole.messages.size(),
          "urgent frames ahead changed the number of messages");
    for (bool u : {true, false}) {
      std::vector<std::vector<uint8_t>> in_order, first;
      for (auto& m : whole.messages)
        if (urgent(m) == u) in_order.push_back(encode_frame(m));
      for (auto& m : ahead.messages)
        if (urgent(m) == u) first.push_back(encode_frame(m));
      check(in_order == first, "urgent frames ahead changed an order or a message");
    }
  }
  return 0;
}
