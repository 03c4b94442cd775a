#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "framework/result.hpp"
#include "transport/wire_message.hpp"

namespace swarm::wire_msg {

/// How a node's endpoint listens and authenticates.
struct endpoint_config {
  /// The name this side proves in the handshake.
  std::string name;
  std::string secret;
  /// Where to accept connections; `listen` false for a pure client (e.g. `swarm status`).
  bool listen = true;
  std::string listen_address = "127.0.0.1";
  uint16_t listen_port = 0; ///< 0: any free port (see `endpoint::port`)
  size_t max_frame_bytes = 64 << 20;
  /// A connection that has not proved the secret by then is closed.
  std::chrono::milliseconds handshake_timeout{5000};
};

/// What the endpoint tells its owner. Every callback runs on the endpoint's I/O thread
/// and must not block.
struct endpoint_handlers {
  /// A message from an authenticated peer.
  std::function<void(const std::string& peer, message&& m)> on_message;
  /// A peer proved the secret (once per connection).
  std::function<void(const std::string& peer)> on_peer_up;
  /// An authenticated connection closed, with the reason.
  std::function<void(const std::string& peer, const std::string& why)> on_peer_down;
  /// A line worth logging (refused connections, bad frames).
  std::function<void(const std::string& line)> log;
};

/// A node's TCP connections to its peers: one I/O thread polls every socket, decodes
/// frames and runs the handshake; nothing reaches `on_message` before the peer proved
/// the cluster secret. A malformed frame closes only that connection, with a logged
/// reason. Senders write straight to the socket from their own thread when nothing is
/// queued (no thread hand-off on the latency path); what cannot be written at once is
/// queued per lane and the I/O thread sends control and call frames before bulk ones.
class endpoint {
public:
  /// Bytes and frames that crossed, by lane, and connections refused.
  struct counters {
    std::array<uint64_t, 3> frames_sent{};
    std::array<uint64_t, 3> bytes_sent{};
    std::array<uint64_t, 3> frames_received{};
    uint64_t refused = 0;
  };

  /// Binds (when listening) and starts the I/O thread.
  static result<std::unique_ptr<endpoint>> start(endpoint_config cfg,
                                                 endpoint_handlers h);

  /// Closes every connection and stops the I/O thread.
  ~endpoint();

  endpoint(const endpoint&) = delete;
  endpoint& operator=(const endpoint&) = delete;

  /// The port it listens on.
  uint16_t port() const noexcept { return port_; }

  const std::string& name() const noexcept { return cfg_.name; }

  /// Connects to `address:port` and waits until both sides proved the secret; returns
  /// the peer's name, or why it failed (refused, wrong secret, timeout).
  result<std::string> connect(const std::string& address, uint16_t port,
                              std::chrono::milliseconds timeout);

  /// Sends `m` to the authenticated peer `peer`; an error when none is connected.
  result<void> send(const std::string& peer, const message& m);

  /// Whether an authenticated connection to `peer` is open.
  bool connected(const std::string& peer) const;

  /// Closes the connections to `peer`.
  void disconnect(const std::string& peer);

  counters stats() const;

private:
  struct connection;
  using conn_ptr = std::shared_ptr<connection>;

  endpoint(endpoint_config cfg, endpoint_handlers h);

  void run();
  void wake();
  void accept_all();
  void on_readable(const conn_ptr& c);
  void close(const conn_ptr& c, const std::string& why);
  void enqueue(connection& c, std::vector<uint8_t> frame, lane l);
  // Writes what `c` has queued; false on a broken socket. Caller holds c's send mutex.
  bool flush_locked(connection& c);
  void log(const std::string& line) const;

  endpoint_config cfg_;
  endpoint_handlers handlers_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};

  mutable std::mutex mtx_;
  std::condition_variable auth_cv_;
  std::vector<conn_ptr> conns_;
  std::map<std::string, conn_ptr> by_name_;

  mutable std::mutex stats_mtx_;
  counters stats_;
  std::thread io_;
};

} // namespace swarm::wire_msg
