#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/node_log.hpp"
#include "base/result.hpp"
#include "transport/landing_table.hpp"
#include "transport/tls_options.hpp"
#include "transport/wire_message.hpp"

namespace swarm::wire_msg {

/// How a node's transport listens and authenticates.
struct endpoint_config {
  /// The name this side proves in the handshake.
  std::string name;
  std::string secret;
  /// Where to accept connections; `listen` false for a pure client (e.g. `swarm status`).
  bool listen = true;
  std::string listen_address = "127.0.0.1";
  uint16_t listen_port = 0; ///< 0: any free port (see `endpoint::port`)
  size_t max_frame_bytes = 64 << 20;
  /// The largest frame a peer may send before it proved the secret (a hello or a proof is
  /// well under 1 KiB), so an unproven peer can make this node hold no more than this.
  size_t pre_auth_frame_bytes = 4 << 10;
  /// Accepted connections still handshaking at once (or twice the peers connected, if
  /// more: the cap grows with the cluster). Every new connection gets in; past this, at
  /// the cost of the oldest unproven one that sent nothing when polled (of its own host
  /// first), and past four times this, of the oldest that sent nothing at all. While half
  /// of it is taken, a connection that sent nothing is closed after a fifth of
  /// `handshake_timeout`. Those whose hello names a peer known here (one that proved the
  /// secret to this node before, or that `resolve` knows) go last, so a known node's
  /// reconnect is not starved.
  size_t max_handshaking = 64;
  /// Accepted connections from one source address handshaking at once (or a quarter of
  /// the cap, if more): past this, a new one from that address gets in at the cost of the
  /// oldest of that address's own, so one address cannot crowd out the others'. Not for
  /// this host's own address (the one a connection was accepted on): nodes sharing a
  /// host dial from it together, and only the cap bounds them.
  size_t max_handshaking_per_source = 16;
  /// A connection that has not proved the secret by then is closed.
  std::chrono::milliseconds handshake_timeout{5000};
  /// Whether the first bulk frame for a peer (object pulls and chunks) opens a second
  /// connection for bulk traffic, served by a thread of its own, so control messages and
  /// calls never wait behind a chunk. Without one, bulk frames queue behind the others
  /// on one connection.
  bool bulk_connection = true;
  /// A peer's connections idle both ways this long are closed, without reporting the
  /// peer down (the next message dials again); 0: never. Only peers `resolve` knows are
  /// closed by this side.
  std::chrono::milliseconds idle_close{0};
  /// A connection that received nothing this long gives back the receive buffers a
  /// flood or a large frame grew (all over `read_chunk`, 256 KiB); 0: never.
  std::chrono::milliseconds trim_after{1000};
  /// A connection whose sent bytes stay unacknowledged this long is closed (the kernel's
  /// TCP_USER_TIMEOUT), and its peer reported down: a peer that receives nothing from
  /// this node (a one-way partition) is found, as silence finds one that sends nothing;
  /// 0: the system's default (about 15 minutes). Bulk connections, which do not speak
  /// for their peer, keep the system's default: a slow reader of chunks is not a lost
  /// peer.
  std::chrono::milliseconds unacked_timeout{0};
  /// Which connections are encrypted with TLS 1.3, and with what key: by default those
  /// that leave the host, with a key derived from `secret`.
  tls_options tls;
};

/// What a transport tells its owner. Every callback runs on the transport's delivery
/// thread (the endpoint's I/O thread; the caller of `fake_network::deliver`) and must
/// not block.
struct endpoint_handlers {
  /// A message from an authenticated peer.
  std::function<void(const std::string& peer, message&& m)> on_message;
  /// A peer proved the secret: its first connection, or another one taking over when the
  /// one in use closed (after that one's down report).
  std::function<void(const std::string& peer)> on_peer_up;
  /// The connection in use for a peer closed, with the reason. A second connection to the
  /// same peer neither replaces the first nor reports anything when it closes.
  std::function<void(const std::string& peer, const std::string& why)> on_peer_down;
  /// Where the payload of a chunk from `peer` should be received, asked by the I/O
  /// thread when its header arrives (see `landing_table`); empty: into a buffer.
  std::function<std::optional<landing>(const std::string& peer,
                                       const object_chunk& header, uint64_t size)>
      land;
  /// Where the peer `peer` listens, for a message to it when no connection is up: the
  /// transport then dials it (off the sender's thread) and holds what is sent to it
  /// meanwhile, in order. Empty (or no function): the send fails at once, as for a
  /// client, which nobody dials, or a node known to be gone.
  std::function<std::optional<std::pair<std::string, uint16_t>>(const std::string& peer)>
      resolve;
  /// Messages held for a dial that failed (refused, timed out, another node or another
  /// secret at the address), in the order they were sent, with the reason.
  std::function<void(const std::string& peer, std::vector<message>&& held,
                     const std::string& why)>
      on_undelivered;
  /// A line worth logging at `level`: connections opened and closed (debug), refused
  /// or broken ones and bad frames (warn).
  std::function<void(log_level level, const std::string& line)> log;
};

/// Frames and bytes that crossed a node's connections, by lane (`lane_of`), and the
/// connections it refused.
struct traffic_counters {
  std::array<uint64_t, 3> frames_sent{};
  std::array<uint64_t, 3> bytes_sent{};
  std::array<uint64_t, 3> frames_received{};
  uint64_t refused = 0;
  /// Sockets open now (handshaking, control and bulk), and peers with a connection up.
  uint64_t connections = 0;
  uint64_t peers = 0;
  /// Peers dialled because something was sent to them; messages such dials could not
  /// deliver.
  uint64_t dials = 0;
  uint64_t undelivered = 0;
  /// Connections closed as idle (by either side; none reports its peer down).
  uint64_t idle_closed = 0;
  /// Bytes the connections hold to receive into, as their I/O threads last saw.
  uint64_t read_buffer_bytes = 0;
};

/// What a node needs from the network: authenticated connections to named peers that
/// carry wire messages. The TCP `endpoint` in production; a node's view of a
/// `fake_network` in deterministic tests.
class transport {
public:
  virtual ~transport();

  /// Connects to the node expected to be `name` at `address:port` and waits until both
  /// sides proved the secret; returns the name the peer proved, or why it failed.
  virtual result<std::string> connect(const std::string& name, const std::string& address,
                                      uint16_t port,
                                      std::chrono::milliseconds timeout) = 0;

  /// Sends `m` to the authenticated peer `peer`. With none connected, dials it when
  /// `endpoint_handlers::resolve` knows where (what is sent meanwhile is held, in order,
  /// and reported to `on_undelivered` if the dial fails); an error when it does not.
  virtual result<void> send(const std::string& peer, const message& m) = 0;

  /// Sends `m` to each of `peers` (encoded once where the transport can); the peers it
  /// could not reach.
  virtual std::vector<std::string> send_all(const std::vector<std::string>& peers,
                                            const message& m);

  /// Whether an authenticated connection to `peer` is open.
  virtual bool connected(const std::string& peer) const = 0;

  /// Closes the connections to `peer`; `why` is what its down report says.
  virtual void disconnect(const std::string& peer, const std::string& why) = 0;

  /// How long nothing has arrived from `peer` on any of its connections: zero while bytes
  /// from it wait to be read, so a peer is never silent because this side is slow to
  /// read. Empty when this transport cannot tell (then only heartbeats count).
  virtual std::optional<std::chrono::milliseconds>
  quiet_for(const std::string& peer) const;

  /// What crossed so far; zeros where this transport does not count.
  virtual traffic_counters traffic() const;

  /// The port it listens on (the one chosen when asked for any); 0 when it does not.
  virtual uint16_t listening_port() const;
};

/// Starts a node's transport with its settings and handlers.
using transport_factory =
    std::function<result<std::unique_ptr<transport>>(endpoint_config, endpoint_handlers)>;

} // namespace swarm::wire_msg
