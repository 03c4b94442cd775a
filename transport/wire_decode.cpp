#include "transport/wire_codec.hpp"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>
#include <kj/io.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "transport/wire_envelope.hpp"

namespace swarm::wire_msg {

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
