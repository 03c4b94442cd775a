#include "transport/handshake.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <stdexcept>

namespace swarm::wire_msg {

namespace {

constexpr size_t nonce_bytes = 32;

error refused(const std::string& why) {
  return {errc::invalid_argument, "handshake refused: " + why};
}

} // namespace

handshake::handshake(std::string self_name, std::string secret)
    : secret_(std::move(secret)) {
  hello_.node = std::move(self_name);
  hello_.protocol = protocol_version;
  hello_.nonce.resize(nonce_bytes);
  if (RAND_bytes(hello_.nonce.data(), static_cast<int>(nonce_bytes)) != 1)
    throw std::runtime_error("no random bytes for the handshake nonce");
}

std::vector<uint8_t> handshake::mac(const std::vector<uint8_t>& first_nonce,
                                    const std::vector<uint8_t>& second_nonce,
                                    const std::string& name) const {
  std::vector<uint8_t> input;
  auto version = protocol_version;
  for (int i = 0; i < 4; ++i)
    input.push_back(static_cast<uint8_t>(version >> (8 * i)));
  input.insert(input.end(), first_nonce.begin(), first_nonce.end());
  input.insert(input.end(), second_nonce.begin(), second_nonce.end());
  input.insert(input.end(), name.begin(), name.end());
  std::vector<uint8_t> out(EVP_MAX_MD_SIZE);
  unsigned len = 0;
  HMAC(EVP_sha256(), secret_.data(), static_cast<int>(secret_.size()), input.data(),
       input.size(), out.data(), &len);
  out.resize(len);
  return out;
}

result<proof> handshake::on_hello(const hello& peer) {
  if (got_hello_) return refused("a second hello");
  if (peer.protocol != protocol_version)
    return refused("peer speaks protocol " + std::to_string(peer.protocol) +
                   ", this node " + std::to_string(protocol_version));
  if (peer.nonce.size() != nonce_bytes)
    return refused("nonce of " + std::to_string(peer.nonce.size()) + " bytes, expected " +
                   std::to_string(nonce_bytes));
  if (peer.node.empty()) return refused("peer sent no node name");
  got_hello_ = true;
  peer_name_ = peer.node;
  peer_nonce_ = peer.nonce;
  return proof{mac(hello_.nonce, peer_nonce_, hello_.node)};
}

result<void> handshake::on_proof(const proof& p) {
  if (!got_hello_) return refused("a proof before the hello");
  if (authenticated_) return refused("a second proof");
  auto expected = mac(peer_nonce_, hello_.nonce, peer_name_);
  if (p.mac.size() != expected.size() ||
      CRYPTO_memcmp(p.mac.data(), expected.data(), expected.size()) != 0)
    return refused("peer '" + peer_name_ + "' does not hold the cluster secret");
  authenticated_ = true;
  return {};
}

result<bool> handshake::accept(const message& m, std::vector<message>& reply) {
  if (authenticated_) {
    if (std::holds_alternative<hello>(m) || std::holds_alternative<proof>(m))
      return refused("a handshake message after authentication");
    return true;
  }
  if (auto* h = std::get_if<hello>(&m)) {
    auto p = on_hello(*h);
    if (!p) return p.err();
    reply.emplace_back(std::move(*p));
    return false;
  }
  if (auto* p = std::get_if<proof>(&m)) {
    if (auto ok = on_proof(*p); !ok) return ok.err();
    return false;
  }
  return refused("a message before the peer authenticated");
}

} // namespace swarm::wire_msg
