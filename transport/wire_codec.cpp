#include "transport/wire_codec.hpp"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>

#include <cstring>

#include "transport/wire.capnp.h"

namespace swarm::wire_msg {

namespace {

kj::ArrayPtr<const kj::byte> bytes_of(const std::vector<uint8_t>& v) {
  return {reinterpret_cast<const kj::byte*>(v.data()), v.size()};
}

std::vector<uint8_t> to_vector(capnp::Data::Reader d) {
  return {d.begin(), d.end()};
}

void put_id(wire::ObjectId::Builder b, const object_ref_id& id) {
  b.setOwner(id.owner);
  b.setSeq(id.seq);
}

object_ref_id get_id(wire::ObjectId::Reader r) {
  return {r.getOwner(), r.getSeq()};
}

void put_value(wire::Value::Builder b, const value& v) {
  b.setTypeName(v.type_name);
  b.setBytes(bytes_of(v.bytes));
}

value get_value(wire::Value::Reader r) {
  return {r.getTypeName(), to_vector(r.getBytes())};
}

struct builder_visitor {
  wire::Envelope::Builder env;

  void operator()(const hello& m) {
    auto b = env.initHello();
    b.setNode(m.node);
    b.setNonce(bytes_of(m.nonce));
    b.setProtocol(m.protocol);
  }
  void operator()(const proof& m) { env.initProof().setMac(bytes_of(m.mac)); }
  void operator()(const heartbeat& m) {
    auto b = env.initHeartbeat();
    b.setSentNs(m.sent_ns);
    b.setLoad(m.load);
  }
  void operator()(const task_submit& m) {
    auto b = env.initTaskSubmit();
    b.setFunction(m.function);
    auto args = b.initArgs(static_cast<unsigned>(m.args.size()));
    for (unsigned i = 0; i < m.args.size(); ++i) {
      if (auto* v = std::get_if<value>(&m.args[i]))
        put_value(args[i].initValue(), *v);
      else
        put_id(args[i].initRef(), std::get<object_ref_id>(m.args[i]));
    }
    put_id(b.initResult(), m.result);
    auto res = b.initResources(static_cast<unsigned>(m.resources.size()));
    for (unsigned i = 0; i < m.resources.size(); ++i) {
      res[i].setName(m.resources[i].first);
      res[i].setAmount(m.resources[i].second);
    }
    b.setMaxRetries(m.max_retries);
    b.setRetryExceptions(m.retry_exceptions);
    b.setPriority(m.priority);
  }
  void operator()(const task_result& m) {
    auto b = env.initTaskResult();
    put_id(b.initResult(), m.result);
    if (auto* v = std::get_if<value>(&m.outcome)) {
      put_value(b.initValue(), *v);
    } else {
      auto e = b.initError();
      e.setCode(std::get<error_value>(m.outcome).code);
      e.setMessage(std::get<error_value>(m.outcome).message);
    }
  }
  void operator()(const object_pull& m) {
    auto b = env.initObjectPull();
    put_id(b.initId(), m.id);
    b.setOffset(m.offset);
    b.setLength(m.length);
  }
  void operator()(const object_chunk& m) {
    auto b = env.initObjectChunk();
    put_id(b.initId(), m.id);
    b.setOffset(m.offset);
    b.setTotal(m.total);
    b.setData(bytes_of(m.data));
  }
};

message read_envelope(wire::Envelope::Reader env) {
  switch (env.which()) {
  case wire::Envelope::HELLO: {
    auto r = env.getHello();
    return hello{r.getNode(), to_vector(r.getNonce()), r.getProtocol()};
  }
  case wire::Envelope::PROOF:
    return proof{to_vector(env.getProof().getMac())};
  case wire::Envelope::HEARTBEAT:
    return heartbeat{env.getHeartbeat().getSentNs(), env.getHeartbeat().getLoad()};
  case wire::Envelope::TASK_SUBMIT: {
    auto r = env.getTaskSubmit();
    task_submit m;
    m.function = r.getFunction();
    for (auto a : r.getArgs()) {
      if (a.isValue())
        m.args.emplace_back(get_value(a.getValue()));
      else
        m.args.emplace_back(get_id(a.getRef()));
    }
    m.result = get_id(r.getResult());
    for (auto res : r.getResources())
      m.resources.emplace_back(res.getName(), res.getAmount());
    m.max_retries = r.getMaxRetries();
    m.retry_exceptions = r.getRetryExceptions();
    m.priority = r.getPriority();
    return m;
  }
  case wire::Envelope::TASK_RESULT: {
    auto r = env.getTaskResult();
    task_result m;
    m.result = get_id(r.getResult());
    if (r.isValue())
      m.outcome = get_value(r.getValue());
    else
      m.outcome = error_value{r.getError().getCode(), r.getError().getMessage()};
    return m;
  }
  case wire::Envelope::OBJECT_PULL: {
    auto r = env.getObjectPull();
    return object_pull{get_id(r.getId()), r.getOffset(), r.getLength()};
  }
  case wire::Envelope::OBJECT_CHUNK: {
    auto r = env.getObjectChunk();
    return object_chunk{get_id(r.getId()), r.getOffset(), r.getTotal(),
                        to_vector(r.getData())};
  }
  }
  // A union member from a newer peer this build does not know.
  throw std::invalid_argument("unknown message kind " + std::to_string(env.which()));
}

} // namespace

lane lane_of(const message& m) {
  if (std::holds_alternative<object_pull>(m) || std::holds_alternative<object_chunk>(m))
    return lane::bulk;
  if (std::holds_alternative<task_submit>(m) || std::holds_alternative<task_result>(m))
    return lane::call;
  return lane::control;
}

std::vector<uint8_t> encode_frame(const message& m) {
  capnp::MallocMessageBuilder builder;
  std::visit(builder_visitor{builder.initRoot<wire::Envelope>()}, m);
  auto words = capnp::messageToFlatArray(builder);
  auto payload = words.asBytes();
  std::vector<uint8_t> out(frame_header_bytes + payload.size());
  auto len = static_cast<uint32_t>(payload.size());
  for (int i = 0; i < 4; ++i)
    out[static_cast<size_t>(i)] = static_cast<uint8_t>(len >> (8 * i));
  out[4] = static_cast<uint8_t>(lane_of(m));
  std::memcpy(out.data() + frame_header_bytes, payload.begin(), payload.size());
  return out;
}

result<void> frame_decoder::fail(std::string why) {
  broken_ = why;
  buf_.clear();
  pos_ = 0;
  return error{errc::invalid_argument, std::move(why)};
}

result<void> frame_decoder::feed(const uint8_t* data, size_t size,
                                 std::vector<message>& out) {
  if (!broken_.empty())
    return error{errc::invalid_argument, "connection already failed: " + broken_};
  buf_.insert(buf_.end(), data, data + size);
  while (buf_.size() - pos_ >= frame_header_bytes) {
    const uint8_t* h = buf_.data() + pos_;
    uint32_t len = 0;
    for (int i = 0; i < 4; ++i)
      len |= static_cast<uint32_t>(h[i]) << (8 * i);
    auto lane_byte = h[4];
    if (len > max_)
      return fail("frame of " + std::to_string(len) + " bytes exceeds the limit of " +
                  std::to_string(max_));
    if (len == 0 || len % sizeof(capnp::word) != 0)
      return fail("frame length " + std::to_string(len) +
                  " is not a whole number of words");
    if (lane_byte > static_cast<uint8_t>(lane::bulk))
      return fail("unknown lane " + std::to_string(lane_byte));
    if (buf_.size() - pos_ < frame_header_bytes + len) break;
    // Cap'n Proto reads words: copy the payload to aligned memory.
    kj::Array<capnp::word> words = kj::heapArray<capnp::word>(len / sizeof(capnp::word));
    std::memcpy(words.begin(), h + frame_header_bytes, len);
    pos_ += frame_header_bytes + len;
    try {
      capnp::ReaderOptions opts;
      opts.traversalLimitInWords = len / sizeof(capnp::word) * 4 + 64;
      opts.nestingLimit = 16;
      capnp::FlatArrayMessageReader reader{words.asPtr(), opts};
      auto m = read_envelope(reader.getRoot<wire::Envelope>());
      if (static_cast<uint8_t>(lane_of(m)) != lane_byte)
        return fail("message on lane " + std::to_string(lane_byte) + " belongs on lane " +
                    std::to_string(static_cast<int>(lane_of(m))));
      out.push_back(std::move(m));
    } catch (const kj::Exception& e) {
      return fail("malformed Cap'n Proto message: " +
                  std::string{e.getDescription().cStr()});
    } catch (const std::exception& e) {
      return fail(std::string{"malformed message: "} + e.what());
    }
  }
  // Drop consumed bytes once they dominate the buffer.
  if (pos_ > 0 && pos_ * 2 >= buf_.size()) {
    buf_.erase(buf_.begin(), buf_.begin() + static_cast<std::ptrdiff_t>(pos_));
    pos_ = 0;
  }
  return {};
}

} // namespace swarm::wire_msg
