#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "framework/result.hpp"
#include "transport/wire_message.hpp"

namespace swarm::wire_msg {

/// The protocol version a hello carries; peers must agree.
inline constexpr uint32_t protocol_version = 1;

/// One side of the handshake that opens every connection between nodes. Both sides send a
/// `hello` (name, 32 random bytes), then a `proof`: HMAC-SHA256 keyed by the cluster
/// secret over the protocol version, the sender's nonce, the receiver's nonce and the
/// sender's name. A proof binds both nonces, so it cannot be replayed on another
/// connection. Until the peer's proof verifies, every other message is refused: the
/// caller closes the connection on any error, before the message reaches an actor.
class handshake {
public:
  handshake(std::string self_name, std::string secret);

  /// What this side sends first.
  const hello& own_hello() const noexcept { return hello_; }

  /// Takes the peer's hello and returns this side's proof.
  result<proof> on_hello(const hello& peer);

  /// Takes the peer's proof; the connection is authenticated when it verifies.
  result<void> on_proof(const proof& p);

  /// Checks a message that arrived on the connection: a handshake step is consumed (its
  /// reply, if any, returned in `reply`), anything before authentication is an error.
  /// Returns whether `m` is for the application (the handshake is complete).
  result<bool> accept(const message& m, std::vector<message>& reply);

  bool authenticated() const noexcept { return authenticated_; }

  /// The name the peer proved, once authenticated.
  const std::string& peer_name() const noexcept { return peer_name_; }

private:
  std::vector<uint8_t> mac(const std::vector<uint8_t>& first_nonce,
                           const std::vector<uint8_t>& second_nonce,
                           const std::string& name) const;

  std::string secret_;
  hello hello_;
  std::string peer_name_;
  std::vector<uint8_t> peer_nonce_;
  bool got_hello_ = false;
  bool authenticated_ = false;
};

} // namespace swarm::wire_msg
