#include <doctest/doctest.h>

#include "transport/handshake.hpp"
#include "transport/wire_codec.hpp"

using namespace swarm::wire_msg;

namespace {

const std::string secret = "0123456789abcdef-cluster";

// Runs the handshake between two sides, as their messages would cross; returns the first
// error either side reports, or an empty string.
std::string connect(handshake& a, handshake& b) {
  std::vector<message> to_b{a.own_hello()}, to_a{b.own_hello()};
  for (int round = 0; round < 4 && (!to_a.empty() || !to_b.empty()); ++round) {
    std::vector<message> next_a, next_b;
    for (auto& m : to_b) {
      auto r = b.accept(m, next_a);
      if (!r) return r.err().message;
    }
    for (auto& m : to_a) {
      auto r = a.accept(m, next_b);
      if (!r) return r.err().message;
    }
    to_a = std::move(next_a);
    to_b = std::move(next_b);
  }
  return "";
}

} // namespace

TEST_CASE("two nodes holding the secret authenticate each other") {
  handshake a{"head", secret}, b{"worker-1", secret};
  CHECK(connect(a, b).empty());
  CHECK(a.authenticated());
  CHECK(b.authenticated());
  CHECK(a.peer_name() == "worker-1");
  CHECK(b.peer_name() == "head");
  std::vector<message> reply;
  CHECK(a.accept(heartbeat{1, 0, {}, 0}, reply).value());
}

TEST_CASE("a peer without the secret is refused") {
  handshake a{"head", secret}, b{"intruder", "not-the-cluster-secret"};
  auto why = connect(a, b);
  CHECK(why.find("does not hold the cluster secret") != std::string::npos);
  CHECK_FALSE((a.authenticated() && b.authenticated()));
}

TEST_CASE("any message before authentication is refused") {
  handshake a{"head", secret};
  std::vector<message> reply;
  auto r = a.accept(task_submit{}, reply);
  REQUIRE_FALSE(r);
  CHECK(r.err().message.find("before the peer authenticated") != std::string::npos);
  CHECK_FALSE(a.accept(proof{std::vector<uint8_t>(32)}, reply));
}

TEST_CASE("a proof recorded on one connection does not open another") {
  handshake a{"head", secret}, b{"worker-1", secret};
  auto proof_b = b.on_hello(a.own_hello()).value();
  // A new connection to the same head: fresh nonces, so the old proof no longer fits.
  handshake a2{"head", secret};
  REQUIRE(a2.on_hello(b.own_hello()));
  auto r = a2.on_proof(proof_b);
  REQUIRE_FALSE(r);
  CHECK(r.err().message.find("does not hold the cluster secret") != std::string::npos);
}

TEST_CASE("a hello of another protocol or with a bad nonce is refused") {
  handshake a{"head", secret};
  auto h = handshake{"w", secret}.own_hello();
  h.protocol = protocol_version + 1;
  CHECK(a.on_hello(h).err().message.find("protocol") != std::string::npos);
  handshake a2{"head", secret};
  h = handshake{"w", secret}.own_hello();
  h.nonce.resize(3);
  CHECK(a2.on_hello(h).err().message.find("nonce of 3 bytes") != std::string::npos);
}

TEST_CASE("handshake messages travel as frames like any other") {
  handshake a{"head", secret};
  frame_decoder d{1 << 16};
  std::vector<message> out;
  auto f = encode_frame(a.own_hello());
  REQUIRE(d.feed(f.data(), f.size(), out));
  REQUIRE(out.size() == 1);
  CHECK(std::get<hello>(out[0]).nonce == a.own_hello().nonce);
}
