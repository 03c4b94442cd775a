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

#include "base/result.hpp"
#include "transport/transport.hpp"
#include "transport/wire_message.hpp"

namespace swarm::wire_msg {

/// A node's TCP connections to its peers: one I/O thread polls every socket, decodes
/// frames and runs the handshake (transport/handshake.hpp); nothing reaches `on_message`
/// before the peer proved the cluster secret. Until then a peer may send only small
/// frames, and only `max_handshaking` accepted connections may be handshaking at once. A malformed frame closes only that connection, with a logged
/// reason. Senders write straight to the socket from their own thread when nothing is
/// queued (no thread hand-off on the latency path); what cannot be written at once is
/// queued per lane and the I/O thread sends control and call frames before bulk ones.
class endpoint final : public transport {
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
  ~endpoint() override;

  endpoint(const endpoint&) = delete;
  endpoint& operator=(const endpoint&) = delete;

  /// The port it listens on.
  uint16_t port() const noexcept { return port_; }

  const std::string& name() const noexcept { return cfg_.name; }

  /// Connects to `address:port` and waits until both sides proved the secret; returns
  /// the peer's name, or why it failed (refused, wrong secret, timeout).
  result<std::string> connect(const std::string& address, uint16_t port,
                              std::chrono::milliseconds timeout);

  /// Connects to `address:port` (`name` is only what the caller expects to find there).
  result<std::string> connect(const std::string& name, const std::string& address,
                              uint16_t port, std::chrono::milliseconds timeout) override {
    (void)name;
    return connect(address, port, timeout);
  }

  result<void> send(const std::string& peer, const message& m) override;
  bool connected(const std::string& peer) const override;
  void disconnect(const std::string& peer, const std::string& why) override;
  std::optional<std::chrono::milliseconds> quiet_for(const std::string& peer) const override;

  counters stats() const;

private:
  struct connection;
  using conn_ptr = std::shared_ptr<connection>;

  endpoint(endpoint_config cfg, endpoint_handlers h);

  void run();
  void wake();
  void accept_all();
  void on_readable(const conn_ptr& c);
  void on_authenticated(const conn_ptr& c);
  size_t handshaking_accepted() const;
  void refuse_over_cap(const std::string& remote);
  void close(const conn_ptr& c, const std::string& reason);
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
  // I/O thread only.
  size_t refused_over_cap_ = 0;
  std::chrono::steady_clock::time_point last_cap_log_{};

  mutable std::mutex stats_mtx_;
  counters stats_;
  std::thread io_;
};

} // namespace swarm::wire_msg
