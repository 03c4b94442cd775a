#include <doctest/doctest.h>

#include "transport/handshake.hpp"
#include "transport/wire_codec.hpp"

using namespace swarm::wire_msg;

namespace {

const std::string secret = "0123456789abcdef-cluster";
using role = handshake::role;

handshake initiator(const std::string& name, const std::string& dialled = "10.0.0.1:7000",
                    const std::string& key = secret) {
  return handshake{role::initiator, name, key, dialled};
}

handshake acceptor(const std::string& name, const std::string& address = "10.0.0.1:7000",
                   const std::string& key = secret) {
  return handshake{role::acceptor, name, key, address};
}

// Runs the handshake between initiator `a` and acceptor `b`, as their messages would
// cross; returns the first error either side reports, or an empty string.
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

// Feeds `m` to `h`; returns what `h` answered, or the refusal's message as an error.
swarm::result<std::vector<message>> step(handshake& h, const message& m) {
  std::vector<message> reply;
  auto r = h.accept(m, reply);
  if (!r) return r.err();
  return reply;
}

} // namespace

TEST_CASE("two nodes holding the secret authenticate each other") {
  auto a = initiator("head"), b = acceptor("worker-1");
  CHECK(connect(a, b).empty());
  CHECK(a.authenticated());
  CHECK(b.authenticated());
  CHECK(a.peer_name() == "worker-1");
  CHECK(b.peer_name() == "head");
  std::vector<message> reply;
  CHECK(a.accept(heartbeat{1, 0, {}, 0, {}}, reply).value());
}

TEST_CASE("a peer without the secret is refused") {
  auto a = initiator("intruder", "10.0.0.1:7000", "not-the-cluster-secret");
  auto b = acceptor("head");
  auto why = connect(a, b);
  CHECK(why.find("'intruder' does not hold the cluster secret") != std::string::npos);
  CHECK_FALSE(b.authenticated());
}

TEST_CASE("the acceptor signs nothing before the initiator proved the secret") {
  auto b = acceptor("head");
  auto a = initiator("worker-1");
  // The acceptor's hello carries no proof, and a hello gets no answer.
  auto answered = step(b, a.own_hello());
  REQUIRE(answered);
  CHECK(answered->empty());
  // A wrong proof is refused without the acceptor's own proof in return.
  auto r = step(b, proof{std::vector<uint8_t>(32, 7)});
  REQUIRE_FALSE(r);
  CHECK(r.err().message.find("does not hold the cluster secret") != std::string::npos);
}

TEST_CASE("a proof the node made as initiator cannot be reflected back to it") {
  // The attacker's connection to the head (the head accepts), and a connection the head
  // dialled that the attacker answers, with the nonce the head gave it on the first: the
  // strongest reflection, even with the head dialling its own address.
  auto head_in = acceptor("head", "10.0.0.1:7000");
  auto head_out = initiator("head", "10.0.0.1:7000");
  auto signed_out =
      step(head_out, hello{"worker-1", head_in.own_hello().nonce, protocol_version})
          .value();
  REQUIRE(signed_out.size() == 1);
  // Offered back on the first connection under a name other than the head's own (that
  // one is refused by name), it fails: it names the initiator "head".
  REQUIRE(step(head_in, hello{"worker-1", head_out.own_hello().nonce, protocol_version}));
  auto r = step(head_in, signed_out.at(0));
  REQUIRE_FALSE(r);
  CHECK(r.err().message.find("does not hold the cluster secret") != std::string::npos);
  CHECK_FALSE(head_in.authenticated());
}

TEST_CASE("a peer claiming the node's own name or echoing its nonce is refused") {
  auto b = acceptor("head");
  auto r = step(b, hello{"head", std::vector<uint8_t>(32, 1), protocol_version});
  REQUIRE_FALSE(r);
  CHECK(r.err().message.find("own name 'head'") != std::string::npos);
  auto b2 = acceptor("head");
  r = step(b2, hello{"worker-1", b2.own_hello().nonce, protocol_version});
  REQUIRE_FALSE(r);
  CHECK(r.err().message.find("echoed") != std::string::npos);
}

TEST_CASE("a proof relayed to a node at another address is refused") {
  // worker-1 dialled the attacker at 10.0.0.66; the attacker relays the exchange to the
  // head at 10.0.0.1 under worker-1's name and nonce. The worker's proof names the
  // address it dialled, so it does not open the head.
  auto worker = initiator("worker-1", "10.0.0.66:7000");
  auto head = acceptor("head", "10.0.0.1:7000");
  REQUIRE(step(head, worker.own_hello()));
  auto worker_proof = step(worker, head.own_hello());
  REQUIRE(worker_proof);
  REQUIRE(worker_proof->size() == 1);
  auto r = step(head, worker_proof->at(0));
  REQUIRE_FALSE(r);
  CHECK(r.err().message.find("'worker-1' does not hold the cluster secret") !=
        std::string::npos);
}

TEST_CASE("any message before authentication is refused") {
  auto a = acceptor("head");
  auto r = step(a, task_submit{});
  REQUIRE_FALSE(r);
  CHECK(r.err().message.find("before the peer authenticated") != std::string::npos);
  CHECK_FALSE(step(a, proof{std::vector<uint8_t>(32)}));
}

TEST_CASE("a proof recorded on one connection does not open another") {
  auto a = initiator("worker-1"), b = acceptor("head");
  REQUIRE(step(b, a.own_hello()));
  auto proof_a = step(a, b.own_hello()).value();
  // A new connection to the same head: fresh nonces, so the old proof no longer fits.
  auto b2 = acceptor("head");
  REQUIRE(step(b2, a.own_hello()));
  auto r = step(b2, proof_a.at(0));
  REQUIRE_FALSE(r);
  CHECK(r.err().message.find("does not hold the cluster secret") != std::string::npos);
}

TEST_CASE("a hello of another protocol, with a bad nonce or a long name is refused") {
  auto h = initiator("w").own_hello();
  h.protocol = protocol_version + 1;
  auto a = acceptor("head");
  CHECK(step(a, h).err().message.find("protocol") != std::string::npos);
  h = initiator("w").own_hello();
  h.nonce.resize(3);
  auto a2 = acceptor("head");
  CHECK(step(a2, h).err().message.find("nonce of 3 bytes") != std::string::npos);
  h = initiator(std::string(max_node_name_bytes + 1, 'n')).own_hello();
  auto a3 = acceptor("head");
  CHECK(step(a3, h).err().message.find("node name of 256 bytes") != std::string::npos);
}

TEST_CASE("handshake messages travel as frames like any other") {
  auto a = initiator("head");
  frame_decoder d{1 << 16};
  std::vector<message> out;
  auto f = encode_frame(a.own_hello());
  REQUIRE(d.feed(f.data(), f.size(), out));
  REQUIRE(out.size() == 1);
  CHECK(std::get<hello>(out[0]).nonce == a.own_hello().nonce);
}

TEST_CASE(
    "a bulk connection is chosen by the side that connects and covered by the proofs") {
  handshake a{role::initiator, "worker-1", secret, "10.0.0.1:7000", true};
  auto b = acceptor("head");
  CHECK(connect(a, b).empty());
  CHECK(a.bulk());
  CHECK(b.bulk());
  CHECK_FALSE(initiator("worker-1").bulk());
  // A man in the middle who flips the flag breaks the proof.
  handshake a2{role::initiator, "worker-1", secret, "10.0.0.1:7000", true};
  auto b2 = acceptor("head");
  auto flipped = a2.own_hello();
  flipped.bulk = false;
  REQUIRE(step(b2, flipped));
  auto proof = step(a2, b2.own_hello()).value();
  auto r = step(b2, proof.at(0));
  REQUIRE_FALSE(r);
  CHECK(r.err().message.find("does not hold the cluster secret") != std::string::npos);
  // The accepting side cannot ask for it.
  auto a3 = initiator("worker-1");
  auto h = acceptor("head").own_hello();
  h.bulk = true;
  r = step(a3, h);
  REQUIRE_FALSE(r);
  CHECK(r.err().message.find("only the side that connects chooses") != std::string::npos);
}
