#include "transport/handshake.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <stdexcept>

namespace swarm::wire_msg {

namespace {

constexpr size_t nonce_bytes = 32;
constexpr const char* label = "swarm node handshake";

error refused(const std::string& why) {
  return {errc::invalid_argument, "handshake refused: " + why};
}

void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

template <class Bytes> void put_field(std::vector<uint8_t>& out, const Bytes& b) {
  put_u32(out, static_cast<uint32_t>(b.size()));
  out.insert(out.end(), b.begin(), b.end());
}

} // namespace

handshake::handshake(role r, std::string self_name, std::string secret,
                     std::string acceptor_address, bool bulk)
    : role_(r), secret_(std::move(secret)),
      acceptor_address_(std::move(acceptor_address)) {
  hello_.node = std::move(self_name);
  hello_.protocol = protocol_version;
  hello_.bulk = r == role::initiator && bulk;
  hello_.nonce.resize(nonce_bytes);
  if (RAND_bytes(hello_.nonce.data(), static_cast<int>(nonce_bytes)) != 1)
    throw std::runtime_error("no random bytes for the handshake nonce");
}

std::vector<uint8_t> handshake::mac(role signer) const {
  bool me_first = role_ == role::initiator;
  const auto& nonce_i = me_first ? hello_.nonce : peer_nonce_;
  const auto& nonce_a = me_first ? peer_nonce_ : hello_.nonce;
  const auto& name_i = me_first ? hello_.node : peer_name_;
  const auto& name_a = me_first ? peer_name_ : hello_.node;
  std::vector<uint8_t> input;
  put_field(input, std::string{label});
  put_field(input, std::string{signer == role::initiator ? "initiator" : "acceptor"});
  put_u32(input, protocol_version);
  put_u32(input, bulk() ? 1 : 0);
  put_field(input, nonce_i);
  put_field(input, nonce_a);
  put_field(input, name_i);
  put_field(input, name_a);
  put_field(input, acceptor_address_);
  if (!binding_.empty()) put_field(input, binding_);
  std::vector<uint8_t> out(EVP_MAX_MD_SIZE);
  unsigned len = 0;
  HMAC(EVP_sha256(), secret_.data(), static_cast<int>(secret_.size()), input.data(),
       input.size(), out.data(), &len);
  out.resize(len);
  return out;
}

result<void> handshake::on_hello(const hello& peer, std::vector<message>& reply) {
  if (got_hello_) return refused("a second hello");
  if (peer.protocol != protocol_version)
    return refused("peer speaks protocol " + std::to_string(peer.protocol) +
                   ", this node " + std::to_string(protocol_version));
  if (peer.nonce.size() != nonce_bytes)
    return refused("nonce of " + std::to_string(peer.nonce.size()) + " bytes, expected " +
                   std::to_string(nonce_bytes));
  if (peer.node.empty()) return refused("peer sent no node name");
  if (peer.bulk && role_ == role::initiator)
    return refused("the accepting side asked for a bulk connection (only the side that "
                   "connects chooses)");
  if (peer.node.size() > max_node_name_bytes)
    return refused("node name of " + std::to_string(peer.node.size()) +
                   " bytes, the limit is " + std::to_string(max_node_name_bytes));
  if (peer.node == hello_.node)
    return refused("peer claims this node's own name '" + peer.node + "'");
  if (peer.nonce == hello_.nonce) return refused("peer echoed this side's nonce");
  got_hello_ = true;
  peer_name_ = peer.node;
  peer_nonce_ = peer.nonce;
  peer_bulk_ = peer.bulk;
  // The initiator proves first; the acceptor waits for that proof before it signs.
  if (role_ == role::initiator) reply.emplace_back(proof{mac(role::initiator)});
  return {};
}

result<void> handshake::on_proof(const proof& p, std::vector<message>& reply) {
  if (!got_hello_) return refused("a proof before the hello");
  auto peer_role = role_ == role::initiator ? role::acceptor : role::initiator;
  auto expected = mac(peer_role);
  if (p.mac.size() != expected.size() ||
      CRYPTO_memcmp(p.mac.data(), expected.data(), expected.size()) != 0)
    return refused("peer '" + peer_name_ + "' does not hold the cluster secret");
  authenticated_ = true;
  if (role_ == role::acceptor) reply.emplace_back(proof{mac(role::acceptor)});
  return {};
}

result<bool> handshake::accept(const message& m, std::vector<message>& reply) {
  if (authenticated_) {
    if (std::holds_alternative<hello>(m) || std::holds_alternative<proof>(m))
      return refused("a handshake message after authentication");
    return true;
  }
  if (auto* h = std::get_if<hello>(&m)) {
    if (auto ok = on_hello(*h, reply); !ok) return ok.err();
    return false;
  }
  if (auto* p = std::get_if<proof>(&m)) {
    if (auto ok = on_proof(*p, reply); !ok) return ok.err();
    return false;
  }
  return refused("a message before the peer authenticated");
}

} // namespace swarm::wire_msg
