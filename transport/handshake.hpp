#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "transport/wire_message.hpp"

namespace swarm::wire_msg {

/// The protocol version a hello carries; peers must agree. 4: a chunk's payload is a
/// raw tail after its message. 5: the head's node table is versioned, sent whole once
/// and then as changes. 6: the messages' defaults are the schema's. 7: nodes join by the
/// head's address, with an owner index the head gives them. 8: idle connections close
/// with a goodbye; a life of a node the head found dead is fenced (heartbeats and actor
/// creations name a life), and a call's result names the instance that ran it. 9: the
/// head sends the nodes' load changes only to nodes whose heartbeats ask for them. 10:
/// node processes of one host lend each other device buffers by mapping (DeviceShare).
/// 11: a stopping node says its hosted actors move (ActorsMoving). 12: the key-value
/// table's shards may be served by several nodes (KvPlacement), and an actor without a
/// name is looked up at its owner (ActorLookup.actorId). 13: the answer to a call from
/// an actor's owner carries the state saved with its effect (TaskResult.state), which
/// is no longer sent apart. 14: a latency-critical message's frame is marked urgent
/// (`urgent_flag`), and a receiver decodes it ahead. 15: a join carries the key-value
/// placement its node holds (Join.placement). 16: a join carries the lives its node's
/// table shows dead and the head's life it followed (Join.dead, Join.headLife), and a
/// key-value chain says since when each member is one (ShardChain.since), and a
/// member's copy says so too, and whether it kept it all that time (GcsChain.since,
/// GcsChain.complete).
inline constexpr uint32_t protocol_version = 16;

/// Longest node name a hello may carry.
inline constexpr size_t max_node_name_bytes = 255;

/// One side of the mutual handshake that opens every connection between nodes.
///
/// The side that connects is the *initiator*, the side that accepted is the *acceptor*:
///
///     initiator -> acceptor   hello(name_i, nonce_i)
///     acceptor  -> initiator  hello(name_a, nonce_a)       (no proof; sent at once
///                                                        under TLS, else once the
///                                                        initiator's first byte showed
///                                                        it does not begin TLS)
///     initiator -> acceptor   proof(mac("initiator"))
///     acceptor  -> initiator  proof(mac("acceptor"))       (only once the first
///     verified)
///
/// where mac(role) = HMAC-SHA256(secret, label, role, version, bulk_i, nonce_i, nonce_a,
/// name_i, name_a, acceptor_address), every variable-length field length-prefixed, and
/// `acceptor_address` is the address the initiator dialled (the acceptor takes it from
/// its accepted socket). So:
/// - the acceptor signs nothing for a peer that has not proved the secret first;
/// - a proof names its role, both nonces, both names and the acceptor's address, so a
///   proof given on one connection fits no other: it cannot be reflected back to the node
///   that made it (its role and its own nonce would be in the wrong place), nor relayed
///   by a man in the middle to a node at another address;
/// - a peer claiming this node's own name is refused.
/// Under TLS (`bind`) the proofs also cover the TLS session's exporter value, and TLS
/// gives the later frames secrecy and integrity; in the clear, a peer on the path between
/// the two addresses can read and change them.
///
/// Until the peer's proof verifies, every other message is refused: the caller closes the
/// connection on any error, before the message reaches an actor.
class handshake {
public:
  enum class role { initiator, acceptor };

  /// `acceptor_address` is "host:port" as dialled (initiator) or as accepted (acceptor);
  /// `bulk`: an initiator opens the connection for bulk traffic (the acceptor learns it
  /// from the initiator's hello, and the proofs cover it).
  handshake(role r, std::string self_name, std::string secret,
            std::string acceptor_address, bool bulk = false);

  /// What this side sends first.
  const hello& own_hello() const noexcept { return hello_; }

  /// Checks a message that arrived on the connection: a handshake step is consumed (its
  /// reply, if any, appended to `reply`), anything before authentication is an error.
  /// Returns whether `m` is for the application (the handshake is complete).
  result<bool> accept(const message& m, std::vector<message>& reply);

  bool authenticated() const noexcept { return authenticated_; }

  /// Whether this side proved itself and waits for the peer's proof (an initiator whose
  /// peer closes now refused that proof).
  bool awaiting_peer_proof() const noexcept {
    return role_ == role::initiator && got_hello_ && !authenticated_;
  }

  /// Whether the connection is for bulk traffic (known to an acceptor from the hello).
  bool bulk() const noexcept {
    return role_ == role::initiator ? hello_.bulk : peer_bulk_;
  }

  /// Binds the proofs to the TLS session the connection runs in (`tls_link::binding`),
  /// before either is made: a proof then fits no other TLS session.
  void bind(std::vector<uint8_t> binding) { binding_ = std::move(binding); }

  /// The name the peer proved, once authenticated.
  const std::string& peer_name() const noexcept { return peer_name_; }

private:
  result<void> on_hello(const hello& peer, std::vector<message>& reply);
  result<void> on_proof(const proof& p, std::vector<message>& reply);
  std::vector<uint8_t> mac(role signer) const;

  role role_;
  std::string secret_;
  std::string acceptor_address_;
  hello hello_;
  std::string peer_name_;
  std::vector<uint8_t> peer_nonce_;
  std::vector<uint8_t> binding_;
  bool peer_bulk_ = false;
  bool got_hello_ = false;
  bool authenticated_ = false;
};

} // namespace swarm::wire_msg
