#include "transport/wire_codec.hpp"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>
#include <kj/io.h>

#include <cstdint>
#include <string>

#include "transport/wire_envelope.hpp"

namespace swarm::wire_msg {

namespace {

// Writes a serialized message at the end of a frame's bytes.
class frame_output final : public kj::OutputStream {
public:
  explicit frame_output(std::vector<uint8_t>& out) : out_(out) {}

  void write(const void* buffer, size_t size) override {
    auto* p = static_cast<const uint8_t*>(buffer);
    out_.insert(out_.end(), p, p + size);
  }

private:
  std::vector<uint8_t>& out_;
};

} // namespace

frame_parts encode_frame_parts(const message& m) {
  capnp::MallocMessageBuilder builder;
  generated::put_message(builder.initRoot<wire::Envelope>(), m);
  auto words = capnp::computeSerializedSizeInWords(builder);
  auto len = static_cast<uint32_t>(words * sizeof(capnp::word));
  auto* chunk = std::get_if<object_chunk>(&m);
  bool raw = chunk != nullptr && chunk->size() > 0;
  auto head = raw ? raw_tail_header_bytes : frame_header_bytes;
  frame_parts out;
  out.bytes.reserve(head + len + (raw && !chunk->source ? chunk->size() : 0));
  out.bytes.resize(head);
  for (int i = 0; i < 4; ++i)
    out.bytes[static_cast<size_t>(i)] = static_cast<uint8_t>(len >> (8 * i));
  out.bytes[4] = static_cast<uint8_t>(lane_of(m));
  if (urgent(m)) out.bytes[5] = urgent_flag;
  if (raw) {
    out.bytes[5] = raw_tail_flag;
    for (int i = 0; i < 8; ++i)
      out.bytes[frame_header_bytes + static_cast<size_t>(i)] =
          static_cast<uint8_t>(chunk->size() >> (8 * i));
  }
  // Serialized once, straight into the frame.
  frame_output stream{out.bytes};
  capnp::writeMessage(stream, builder);
  if (raw && chunk->source) {
    // Sent from where the payload is, which stays alive while the frame is queued.
    out.tail = chunk->bytes();
    out.tail_size = chunk->size();
    out.pad = raw_tail_padding(chunk->size());
    out.keep = chunk->source;
  } else if (raw) {
    // Bytes only the message keeps alive (its `data`) are copied into the frame.
    out.bytes.insert(out.bytes.end(), chunk->bytes(), chunk->bytes() + chunk->size());
    out.bytes.resize(out.bytes.size() + raw_tail_padding(chunk->size()));
  }
  return out;
}

std::vector<uint8_t> encode_frame(const message& m) {
  auto parts = encode_frame_parts(m);
  parts.bytes.insert(parts.bytes.end(), parts.tail, parts.tail + parts.tail_size);
  parts.bytes.resize(parts.bytes.size() + parts.pad);
  return std::move(parts.bytes);
}

result<message> decode_message(const uint8_t* data, size_t bytes) {
  kj::ArrayPtr<const capnp::word> words{reinterpret_cast<const capnp::word*>(data),
                                        bytes / sizeof(capnp::word)};
  try {
    capnp::ReaderOptions opts;
    opts.traversalLimitInWords = bytes / sizeof(capnp::word) * 4 + 64;
    opts.nestingLimit = 16;
    capnp::FlatArrayMessageReader reader{words, opts};
    return generated::get_message(reader.getRoot<wire::Envelope>());
  } catch (const kj::Exception& e) {
    return error{errc::invalid_argument, "malformed Cap'n Proto message: " +
                                             std::string{e.getDescription().cStr()}};
  } catch (const std::exception& e) {
    return error{errc::invalid_argument, std::string{"malformed message: "} + e.what()};
  }
}

} // namespace swarm::wire_msg
