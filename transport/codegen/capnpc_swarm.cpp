// capnpc_swarm: the Cap'n Proto compiler plugin that makes Swarm's wire messages out of
// transport/wire.capnp, the only place a message is written. Run by the build as
//   capnp compile -o<this program>:<out dir> transport/wire.capnp
// it writes into <out dir>:
//   wire_message.hpp  the messages as plain C++ values, `message` (their variant), lanes
//   wire_message.cpp  their Cap'n Proto encoder and decoder, and `lane_of`
//   wire_envelope.hpp what wire_message.cpp gives the codec (transport/ only)
//   wire_samples.hpp  one message of each kind with every field set (tests, fuzz corpus)
// The root is the struct annotated `variant("message")`. How a message differs from the
// default C++ shape is said by the annotations of transport/cxx.capnp.

#include <capnp/serialize.h>
#include <kj/exception.h>

#include <fstream>
#include <iostream>
#include <iterator>
#include <stdexcept>
#include <string>

#include "transport/codegen/generator.hpp"

namespace {

// Left as it is when unchanged, so that what includes it is not built again.
void write(const std::string& path, const std::string& text) {
  std::ifstream old{path};
  std::string was{std::istreambuf_iterator<char>{old}, std::istreambuf_iterator<char>{}};
  if (old && was == text) return;
  std::ofstream out{path};
  out << text;
  if (!out) swarm::codegen::fail("cannot write " + path);
}

} // namespace

int main() {
  try {
    capnp::ReaderOptions opts;
    opts.traversalLimitInWords = uint64_t{1} << 30;
    capnp::StreamFdMessageReader reader{0, opts};
    auto req = reader.getRoot<capnp::schema::CodeGeneratorRequest>();
    capnp::SchemaLoader loader;
    for (auto node : req.getNodes())
      loader.load(node);
    bool written = false;
    for (auto file : req.getRequestedFiles()) {
      std::string name = file.getFilename().cStr();
      if (name.size() < 10 || name.substr(name.size() - 10) != "wire.capnp") continue;
      swarm::codegen::generator g{loader, req};
      g.run(file.getId());
      write("wire_message.hpp", g.header());
      write("wire_message.cpp", g.source());
      write("wire_envelope.hpp", g.envelope_header());
      write("wire_samples.hpp", g.samples());
      written = true;
    }
    if (written) return 0;
    std::cerr << "capnpc_swarm: no wire.capnp among the files to compile\n";
  } catch (const kj::Exception& e) {
    std::cerr << "capnpc_swarm: " << e.getDescription().cStr() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "capnpc_swarm: " << e.what() << "\n";
  }
  return 1;
}
