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
#include <random>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/result.hpp"
#include "transport/transport.hpp"
#include "transport/wire_codec.hpp"
#include "transport/wire_message.hpp"

namespace swarm::wire_msg {

class tls_context;

/// A node's TCP connections to its peers: an I/O thread waits on the sockets, decodes
/// frames and runs the handshake (transport/handshake.hpp); nothing reaches `on_message`
/// before the peer proved the cluster secret. Until then a peer may send only small
/// frames, and only `max_handshaking` accepted connections may be handshaking at once. A
/// malformed frame closes only that connection, with a logged reason. Senders write
/// straight to the socket from their own thread when nothing is queued (no thread
/// hand-off on the latency path); what cannot be written at once is queued per lane and
/// the I/O thread sends control and call frames before bulk ones.
///
/// Connections are made on demand: a send to a peer with no connection dials it where
/// `endpoint_handlers::resolve` says, without blocking the sender, and holds what is sent
/// meanwhile, in order; connections idle both ways for `endpoint_config::idle_close`
/// close at both ends (a goodbye, then each side writes out and shuts its own), with no
/// down report. Each I/O thread keeps its sockets registered with epoll and looks only
/// at the connections that changed.
///
/// Bulk traffic has its own path: the first bulk frame for a peer opens a second,
/// separately authenticated connection for it (`endpoint_config::bulk_connection`), read
/// and written by a second I/O thread, so a heartbeat or a call never waits behind a
/// chunk in a socket buffer or behind the copying of one. A chunk is sent from the
/// value's memory (scatter-gather, no copy into a frame) and read in the buffer it
/// arrived in. The bulk connection does not speak for the peer: the peer is up and down
/// with its first connection, and a bulk connection in use that closes takes the peer's
/// other connections down with it (its pulls in flight are lost with it, and must fail
/// rather than wait).
class endpoint final : public transport {
public:
  /// Bytes and frames that crossed, by lane, and connections refused.
  using counters = traffic_counters;

  /// Binds (when listening) and starts the I/O thread.
  static result<std::unique_ptr<endpoint>> start(endpoint_config cfg,
                                                 endpoint_handlers h);

  /// Closes every connection and stops the I/O thread.
  ~endpoint() override;

  endpoint(const endpoint&) = delete;
  endpoint& operator=(const endpoint&) = delete;

  /// The port it listens on.
  uint16_t port() const noexcept { return port_; }
  uint16_t listening_port() const override { return port_; }

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
  std::vector<std::string> send_all(const std::vector<std::string>& peers,
                                    const message& m) override;
  bool connected(const std::string& peer) const override;
  /// Whether a bulk connection to `peer` is up (bulk frames share the first one until).
  bool bulk_connected(const std::string& peer) const;
  void disconnect(const std::string& peer, const std::string& why) override;
  std::optional<std::chrono::milliseconds>
  quiet_for(const std::string& peer) const override;

  counters stats() const;
  traffic_counters traffic() const override { return stats(); }

private:
  struct connection;
  using clock_type = std::chrono::steady_clock;
  using conn_ptr = std::shared_ptr<connection>;

  endpoint(endpoint_config cfg, endpoint_handlers h);

  // One I/O loop: the main one (accepts, handshakes, control and calls) or the bulk one.
  void run(bool bulk);
  void wake(bool bulk = false);
  // `c` changed (new, frames queued, broken): its I/O loop looks at it again.
  void attend(connection& c);
  // The loop `bulk`: registers `c` for the events it needs now, or closes it if broken.
  void watch(bool bulk, const conn_ptr& c,
             std::vector<std::pair<conn_ptr, std::string>>& to_close);
  // The loop `bulk`: forgets `c`, before its socket is closed or handed over.
  void unwatch(bool bulk, const conn_ptr& c);
  // Connects a socket to `address:port` (waiting until `deadline`) and starts the
  // handshake; the I/O thread ends it.
  result<conn_ptr> open(const std::string& address, uint16_t port,
                        clock_type::time_point deadline);
  // Starts connecting a socket to `address:port` without waiting: the I/O thread sees
  // the connect end, then the handshake. `dialled_for`: the peer expected there.
  result<conn_ptr> open_async(const std::string& address, uint16_t port, bool bulk,
                              const std::string& dialled_for);
  // The connection `c` was made for, with its hello queued, joins the I/O loop.
  conn_ptr add_dialled(int fd, const std::string& where, bool bulk,
                       const std::string& dialled_for, bool connecting);
  // Holds `m` for `peer` until a connection to it is up, dialling it: null when held,
  // the connection when one came up meanwhile, an error when `peer` cannot be dialled.
  result<conn_ptr> dial_and_hold(const std::string& peer, const message& m);
  // Opens a bulk connection to `peer`: to `dialled` ("address:port") when this side
  // dialled its first connection, else where `resolve` says; none for a peer nobody
  // dials. Whether its dial began.
  bool open_bulk(const std::string& peer, const std::string& dialled);
  // The bulk messages that waited for `peer`'s bulk connection go on `c`, which is up
  // now. Caller holds mtx_.
  void release_bulk_held_locked(const std::string& peer, connection& c);
  // Its bulk connection could not be made: what waited for it is sent as if it had not
  // waited (on the first connection).
  void send_bulk_held(const std::string& peer);
  // The I/O thread: starts the dials whose time came; how long until the next one may.
  std::chrono::milliseconds start_dials();
  // `c`'s connect ended (I/O thread): on to the handshake, or closed.
  void on_connected(const conn_ptr& c);
  // What the dial of `peer` held, sent ahead of anything else on `c` (which is up and
  // now in use for it). Caller holds mtx_.
  void release_held_locked(const std::string& peer, connection& c);
  // The dial of `peer` on `c` (null: its socket could not even start) failed: tried
  // again or given up, its messages reported undelivered.
  void dial_failed(const std::string& peer, const conn_ptr& c, const std::string& why,
                   bool may_retry = true);
  // Accepts what waits on the listening socket, a bounded few per call.
  void accept_pending();
  // The connection that carries `l` to `peer` (its bulk one for bulk, when up); null
  // when none is up. Caller holds mtx_.
  conn_ptr connection_to_locked(const std::string& peer, lane l) const;
  void on_readable(const conn_ptr& c);
  // Hands the frames `msgs` (decoded with `ok`), and those the decoder still holds, to
  // the handshake and the handlers; false when `c` was closed.
  bool deliver(const conn_ptr& c, result<void> ok, std::vector<message>& msgs);
  // TLS (endpoint_tls.cpp). Sets up `c`'s TLS as its peer's address and `cfg_.tls` say.
  void secure(connection& c);
  // `c`, accepted from a peer that may speak TLS or not, says by its first byte; false
  // when there is nothing to read yet or `c` closed.
  bool decide_tls(const conn_ptr& c);
  // Reads the peer's part of `c`'s TLS handshake; true once it is through and what
  // followed it was delivered, false while it goes on or when `c` closed.
  bool tls_handshake(const conn_ptr& c);
  // Opens the `n` bytes of records just received on `c` and delivers their frames;
  // false when `c` closed.
  bool open_records(const conn_ptr& c, size_t n, std::vector<message>& msgs);
  void on_authenticated(const conn_ptr& c);
  // The unproven accepted connection to close so that one from `remote`, accepted on
  // `local`, gets in, and the cap it is over (the share of one address, or the whole
  // cap as grown with the cluster): none while under the caps.
  struct eviction {
    conn_ptr conn;
    std::string over;
  };
  eviction handshake_to_drop(const std::string& remote, const std::string& local) const;
  // `peer` proved the secret: kept in `proved_`, the newest `proved_kept` of them.
  // Caller holds mtx_.
  void remember_proved_locked(const std::string& peer);
  static constexpr size_t proved_kept = 4096;
  void close(const conn_ptr& c, const std::string& reason);
  // Queues (or writes) `frame` on `c`; false, and `frame` untouched, when `c` retires.
  bool enqueue(connection& c, frame_parts&& frame, lane l);
  // An up, non-bulk, non-retiring connection to `peer` other than `not_this`, to take
  // over. Caller holds mtx_.
  conn_ptr spare_locked(const std::string& peer, const conn_ptr& not_this) const;
  // The main I/O loop: retires the connections of each peer idle both ways for
  // `idle_close` (one that can be dialled again).
  void retire_idle();
  // The loop `bulk`: each of its connections that received nothing for `trim_after`
  // gives back the receive buffers it grew.
  void trim_quiet(bool bulk);
  // Takes `c` out of use without reporting its peer down; `initiator`: this side
  // decided, and says goodbye on it; otherwise the peer did.
  void retire(const conn_ptr& c, bool initiator);
  // A retiring connection with nothing left to send shuts its writing side. Caller holds
  // c's send mutex.
  void shut_if_done_locked(connection& c);
  // Writes what `c` has queued; false on a broken socket. Caller holds c's send mutex.
  bool flush_locked(connection& c);
  // Writes `f` from byte `off` on until it is all written or the socket is full (true,
  // `off` where it stopped), or breaks (false, `c` marked broken with `what`).
  bool write_locked(connection& c, const frame_parts& f, size_t& off, const char* what);
  void log(log_level level, const std::string& line) const;

  endpoint_config cfg_;
  endpoint_handlers handlers_;
  // For connections under TLS; null when `cfg_.tls` is off.
  std::shared_ptr<const tls_context> tls_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;
  int bulk_wake_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};

  mutable std::mutex mtx_;
  std::condition_variable auth_cv_;
  std::vector<conn_ptr> conns_;
  std::map<std::string, conn_ptr> by_name_;
  std::map<std::string, conn_ptr> bulk_by_name_;
  // Peers that proved the secret to this node, with when they last did (the newest
  // `proved_kept`): their reconnects are vouched for among the handshaking.
  std::map<std::string, clock_type::time_point> proved_;
  // A peer being dialled because something was sent to it, and what was sent meanwhile.
  struct dial {
    std::string address;
    uint16_t port = 0;
    int attempt = 0;
    clock_type::time_point deadline;
    clock_type::time_point not_before;
    std::vector<message> held;
    conn_ptr conn; // null between attempts
  };
  std::map<std::string, dial> dials_;
  // Peers whose bulk connection was asked for (by a first bulk frame) while their first
  // connection is up.
  std::set<std::string> bulk_dials_;
  // The bulk messages for a peer whose bulk connection is being dialled, sent on it once
  // it is up: on the first connection they would fill the peer's socket, and a peer
  // whose reader stalls past `unacked_timeout` would be cut off.
  std::map<std::string, std::vector<message>> bulk_held_;
  std::minstd_rand jitter_{std::random_device{}()}; // guarded by mtx_
  // Each I/O loop's epoll set (main, bulk), and what changed for it, from any thread.
  std::array<int, 2> epoll_fds_{-1, -1};
  std::mutex attention_mtx_;
  std::array<std::vector<conn_ptr>, 2> attention_;
  // Each loop's own: its registered connections by fd, with their events, and those of
  // them not proven yet (timed).
  struct registration {
    conn_ptr conn;
    uint32_t events = 0;
  };
  std::array<std::unordered_map<int, registration>, 2> registered_;
  std::array<std::vector<conn_ptr>, 2> unproven_;
  // Guarded by stats_mtx_: connections closed for the cap since the last line said so.
  size_t crowded_closed_ = 0;
  std::chrono::steady_clock::time_point last_crowded_log_{};

  mutable std::mutex stats_mtx_;
  counters stats_;
  std::thread io_;
  std::thread bulk_io_;
};

} // namespace swarm::wire_msg
