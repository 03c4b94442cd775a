#include "transport/endpoint.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <thread>
#include <tuple>

#include "transport/endpoint_connection.hpp"
#include "transport/handshake.hpp"
#include "transport/traffic_class.hpp"
#include "transport/wire_codec.hpp"

namespace swarm::wire_msg {

namespace {

using clock_type = std::chrono::steady_clock;

constexpr size_t read_chunk = 256 << 10;

// Reasons a connection closes, which set the level its line is logged at.
constexpr std::string_view peer_closed = "the peer closed the connection";
constexpr std::string_view bad_frame = "bad frame: ";
// Why unproven connections are closed for the handshaking cap.
constexpr std::string_view crowded_out = "nothing sent within";
constexpr std::string_view make_room = "closed to make room for a connection from ";

std::string sys_error(const char* what) {
  return std::string{what} + ": " + std::strerror(errno);
}

void tune(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

std::string peer_address(const sockaddr_in& a) {
  char buf[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &a.sin_addr, buf, sizeof(buf));
  return std::string{buf} + ":" + std::to_string(ntohs(a.sin_port));
}

// The address a peer dialled to reach this accepted socket.
std::string local_address(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof(a);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) return "";
  return peer_address(a);
}

result<sockaddr_in> make_address(const std::string& host, uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  if (::inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1)
    return error{errc::invalid_argument,
                 "'" + host +
                     "' is not an IPv4 address (use dotted form, e.g. 127.0.0.1)"};
  return a;
}

// Writes `f` from byte `off` on with one sendmsg; what ::sendmsg returns.
ssize_t send_from(int fd, const frame_parts& f, size_t off) {
  iovec iov[3];
  int n = 0;
  auto add = [&](const uint8_t* p, size_t len) {
    if (off >= len) {
      off -= len;
      return;
    }
    iov[n++] = {const_cast<uint8_t*>(p + off), len - off};
    off = 0;
  };
  static constexpr uint8_t zeros[8] = {};
  add(f.bytes.data(), f.bytes.size());
  add(f.tail, f.tail_size);
  add(zeros, f.pad);
  msghdr m{};
  m.msg_iov = iov;
  m.msg_iovlen = static_cast<size_t>(n);
  return ::sendmsg(fd, &m, MSG_NOSIGNAL);
}

// A non-blocking socket connecting to `address:port`, and whether its connect ended
// already (it may on loopback).
result<std::pair<int, bool>> start_connect(const std::string& address, uint16_t port) {
  auto addr = make_address(address, port);
  if (!addr) return addr.err();
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return error{errc::node_unreachable, sys_error("socket")};
  if (::connect(fd, reinterpret_cast<sockaddr*>(&*addr), sizeof(*addr)) == 0)
    return std::pair{fd, true};
  if (errno == EINPROGRESS) return std::pair{fd, false};
  auto why =
      sys_error(("cannot connect to " + address + ":" + std::to_string(port)).c_str());
  ::close(fd);
  return error{errc::node_unreachable, why};
}

// The host of an "address:port".
std::string host_of(const std::string& remote) {
  return remote.substr(0, remote.rfind(':'));
}

// Whether the connection on `fd` sent nothing yet: no bytes read from it (`last_received`
// is still when it was `opened`), and none waiting to be.
bool silent(int fd, int64_t last_received, int64_t opened) {
  if (last_received != opened) return false;
  int waiting = 0;
  return ::ioctl(fd, FIONREAD, &waiting) != 0 || waiting == 0;
}

} // namespace

result<std::unique_ptr<endpoint>> endpoint::start(endpoint_config cfg,
                                                  endpoint_handlers h) {
  std::unique_ptr<endpoint> ep{new endpoint(std::move(cfg), std::move(h))};
  ep->wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  ep->bulk_wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (ep->wake_fd_ < 0 || ep->bulk_wake_fd_ < 0)
    return error{errc::invalid_argument, sys_error("eventfd")};
  if (ep->cfg_.listen) {
    auto addr = make_address(ep->cfg_.listen_address, ep->cfg_.listen_port);
    if (!addr) return addr.err();
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return error{errc::invalid_argument, sys_error("socket")};
    ep->listen_fd_ = fd;
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    auto where = ep->cfg_.listen_address + ":" + std::to_string(ep->cfg_.listen_port);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&*addr), sizeof(*addr)) != 0)
      return error{errc::invalid_argument,
                   sys_error(("cannot listen on " + where).c_str())};
    if (::listen(fd, SOMAXCONN) != 0)
      return error{errc::invalid_argument,
                   sys_error(("cannot listen on " + where).c_str())};
    sockaddr_in bound{};
    socklen_t len = sizeof(bound);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
    ep->port_ = ntohs(bound.sin_port);
  }
  for (bool bulk : {false, true}) {
    auto& efd = ep->epoll_fds_[bulk];
    efd = ::epoll_create1(EPOLL_CLOEXEC);
    if (efd < 0) return error{errc::invalid_argument, sys_error("epoll_create1")};
    for (int fd : {bulk ? ep->bulk_wake_fd_ : ep->wake_fd_, bulk ? -1 : ep->listen_fd_}) {
      if (fd < 0) continue;
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.fd = fd;
      if (::epoll_ctl(efd, EPOLL_CTL_ADD, fd, &ev) != 0)
        return error{errc::invalid_argument, sys_error("epoll_ctl")};
    }
  }
  ep->io_ = std::thread{[raw = ep.get()] { raw->run(false); }};
  ep->bulk_io_ = std::thread{[raw = ep.get()] { raw->run(true); }};
  return ep;
}

endpoint::endpoint(endpoint_config cfg, endpoint_handlers h)
    : cfg_(std::move(cfg)), handlers_(std::move(h)) {}

endpoint::~endpoint() {
  stop_ = true;
  wake(false);
  wake(true);
  if (io_.joinable()) io_.join();
  if (bulk_io_.joinable()) bulk_io_.join();
  for (auto& c : conns_) {
    std::lock_guard<std::mutex> guard{c->send_mtx};
    c->broken = true;
    ::close(c->fd);
  }
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
  if (bulk_wake_fd_ >= 0) ::close(bulk_wake_fd_);
  for (int fd : epoll_fds_)
    if (fd >= 0) ::close(fd);
}

void endpoint::log(log_level level, const std::string& line) const {
  if (handlers_.log) handlers_.log(level, line);
}

void endpoint::wake(bool bulk) {
  uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(bulk ? bulk_wake_fd_ : wake_fd_, &one, sizeof(one));
}

void endpoint::attend(connection& c) {
  bool bulk = c.on_bulk_loop.load();
  {
    std::lock_guard<std::mutex> guard{attention_mtx_};
    attention_[bulk].push_back(c.shared_from_this());
  }
  wake(bulk);
}

endpoint::counters endpoint::stats() const {
  counters out;
  {
    std::lock_guard<std::mutex> guard{stats_mtx_};
    out = stats_;
  }
  std::lock_guard<std::mutex> guard{mtx_};
  out.connections = conns_.size();
  out.peers = by_name_.size();
  return out;
}

bool endpoint::connected(const std::string& peer) const {
  std::lock_guard<std::mutex> guard{mtx_};
  return by_name_.count(peer) != 0;
}

bool endpoint::bulk_connected(const std::string& peer) const {
  std::lock_guard<std::mutex> guard{mtx_};
  return bulk_by_name_.count(peer) != 0;
}

std::optional<std::chrono::milliseconds>
endpoint::quiet_for(const std::string& peer) const {
  std::optional<std::chrono::milliseconds> quiet;
  auto now = clock_type::now().time_since_epoch().count();
  std::lock_guard<std::mutex> guard{mtx_};
  for (auto& c : conns_) {
    if (c->state != connection::phase::up || c->peer != peer) continue;
    int unread = 0;
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
        clock_type::duration{now - c->last_received.load(std::memory_order_relaxed)});
    if (::ioctl(c->fd, FIONREAD, &unread) == 0 && unread > 0)
      ms = std::chrono::milliseconds{0};
    if (!quiet || ms < *quiet) quiet = ms;
  }
  return quiet;
}

void endpoint::disconnect(const std::string& peer, const std::string& why) {
  std::vector<conn_ptr> cut;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    for (auto& c : conns_) {
      if (c->peer != peer) continue;
      std::lock_guard<std::mutex> send_guard{c->send_mtx};
      c->broken = true;
      c->broken_because = why;
      cut.push_back(c);
    }
  }
  for (auto& c : cut)
    attend(*c);
}

bool endpoint::flush_locked(connection& c) {
  if (c.connecting) return true;
  while (true) {
    if (c.current.size() == 0) {
      auto next = std::find_if(c.queued.begin(), c.queued.end(),
                               [](auto& q) { return !q.empty(); });
      if (next == c.queued.end()) return true;
      c.current = std::move(next->front());
      c.current_off = 0;
      next->pop_front();
    }
    while (c.current_off < c.current.size()) {
      auto n = send_from(c.fd, c.current, c.current_off);
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
        if (errno == EINTR) continue;
        c.broken = true;
        c.broken_because = sys_error("write failed");
        return false;
      }
      c.current_off += static_cast<size_t>(n);
    }
    c.current = {};
    c.current_off = 0;
  }
}

bool endpoint::enqueue(connection& c, frame_parts&& frame, lane l) {
  std::unique_lock<std::mutex> guard{c.send_mtx};
  if (c.retiring) return false;
  {
    std::lock_guard<std::mutex> stats_guard{stats_mtx_};
    auto i = static_cast<size_t>(l);
    ++stats_.frames_sent[i];
    stats_.bytes_sent[i] += frame.size();
  }
  if (c.broken) return true;
  c.last_sent.store(clock_type::now().time_since_epoch().count(),
                    std::memory_order_relaxed);
  if (c.pending_locked()) {
    c.queued[static_cast<size_t>(l)].push_back(std::move(frame));
  } else {
    c.current = std::move(frame);
    c.current_off = 0;
    flush_locked(c);
    if (!c.pending_locked() && !c.broken) return true;
  }
  guard.unlock();
  attend(c);
  return true;
}

endpoint::conn_ptr endpoint::connection_to_locked(const std::string& peer, lane l) const {
  if (auto b = bulk_by_name_.find(peer); l == lane::bulk && b != bulk_by_name_.end())
    return b->second;
  if (auto i = by_name_.find(peer); i != by_name_.end()) return i->second;
  return nullptr;
}

result<void> endpoint::send(const std::string& peer, const message& m) {
  conn_ptr c;
  auto l = lane_of(m);
  auto frame = encode_frame_parts(m);
  // A connection found retiring (idle, closing) between the look-up and the send is out
  // of use by then: looked up again, it is another one or a dial.
  for (int tries = 1;; ++tries) {
    std::optional<std::string> bulk_to; // where to open the bulk connection, when first
    {
      std::lock_guard<std::mutex> guard{mtx_};
      c = connection_to_locked(peer, l);
      // The first bulk frame for a peer opens its bulk connection; it and those that
      // follow until that is up share the first.
      if (c && l == lane::bulk && cfg_.bulk_connection && !c->hs.bulk() &&
          bulk_dials_.insert(peer).second)
        bulk_to = c->accepted ? std::string{} : c->remote;
    }
    if (bulk_to) open_bulk(peer, *bulk_to);
    if (!c) {
      auto held = dial_and_hold(peer, m);
      if (!held) return held.err();
      if (!*held) return {};
      c = std::move(*held);
    }
    if (enqueue(*c, std::move(frame), l)) break;
    if (tries == 8)
      return error{errc::node_unreachable,
                   "the connections to node '" + peer + "' kept closing as idle"};
  }
  std::lock_guard<std::mutex> guard{c->send_mtx};
  if (c->broken)
    return error{errc::node_unreachable,
                 "connection to node '" + peer + "' broke: " + c->broken_because};
  return {};
}

std::vector<std::string> endpoint::send_all(const std::vector<std::string>& peers,
                                            const message& m) {
  std::vector<std::string> missed;
  if (peers.empty()) return missed;
  auto l = lane_of(m);
  std::vector<std::pair<const std::string*, conn_ptr>> to;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    for (auto& p : peers)
      if (auto c = connection_to_locked(p, l))
        to.emplace_back(&p, std::move(c));
      else
        missed.push_back(p);
  }
  // Those not connected are dialled where they can be.
  missed.erase(
      std::remove_if(missed.begin(), missed.end(),
                     [&](const std::string& p) { return send(p, m).has_value(); }),
      missed.end());
  auto frame = encode_frame_parts(m);
  for (auto& [peer, c] : to) {
    if (!enqueue(*c, frame_parts{frame}, l)) { // retiring: another connection, or a dial
      if (!send(*peer, m)) missed.push_back(*peer);
      continue;
    }
    std::lock_guard<std::mutex> guard{c->send_mtx};
    if (c->broken) missed.push_back(*peer);
  }
  return missed;
}

result<endpoint::conn_ptr> endpoint::open(const std::string& address, uint16_t port,
                                          clock_type::time_point deadline) {
  auto where = address + ":" + std::to_string(port);
  auto started = start_connect(address, port);
  if (!started) return started.err();
  auto [fd, done] = *started;
  if (!done) {
    pollfd p{fd, POLLOUT, 0};
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                    clock_type::now());
    int soerr = 0;
    socklen_t len = sizeof(soerr);
    if (::poll(&p, 1, static_cast<int>(std::max<int64_t>(0, ms.count()))) != 1 ||
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0 || soerr != 0) {
      ::close(fd);
      return error{errc::node_unreachable,
                   "cannot connect to " + where + ": " +
                       (soerr != 0 ? std::strerror(soerr) : "timed out")};
    }
  }
  tune(fd);
  return add_dialled(fd, where, false, "", false);
}

result<endpoint::conn_ptr> endpoint::open_async(const std::string& address, uint16_t port,
                                                bool bulk,
                                                const std::string& dialled_for) {
  auto started = start_connect(address, port);
  if (!started) return started.err();
  auto [fd, done] = *started;
  if (done) tune(fd);
  return add_dialled(fd, address + ":" + std::to_string(port), bulk, dialled_for, !done);
}

endpoint::conn_ptr endpoint::add_dialled(int fd, const std::string& where, bool bulk,
                                         const std::string& dialled_for,
                                         bool connecting) {
  auto c = std::make_shared<connection>(fd, where, handshake::role::initiator, where,
                                        cfg_, bulk);
  c->dialled_for = dialled_for;
  c->connecting = connecting;
  enqueue(*c, encode_frame_parts(c->hs.own_hello()), lane::control);
  {
    std::lock_guard<std::mutex> guard{mtx_};
    conns_.push_back(c);
  }
  attend(*c);
  return c;
}

result<endpoint::conn_ptr> endpoint::dial_and_hold(const std::string& peer,
                                                   const message& m) {
  auto hold = [&]() -> conn_ptr {
    if (auto c = connection_to_locked(peer, lane_of(m))) return c;
    dials_.at(peer).held.push_back(m);
    return nullptr;
  };
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (dials_.count(peer)) return hold();
  }
  std::optional<std::pair<std::string, uint16_t>> where;
  if (handlers_.resolve) where = handlers_.resolve(peer);
  if (!where)
    return error{errc::node_unreachable, "no connection to node '" + peer + "'"};
  std::lock_guard<std::mutex> guard{mtx_};
  if (auto c = connection_to_locked(peer, lane_of(m))) return c;
  if (auto [d, fresh] = dials_.try_emplace(peer); fresh) {
    {
      std::lock_guard<std::mutex> stats_guard{stats_mtx_};
      ++stats_.dials;
    }
    auto now = clock_type::now();
    d->second.address = where->first;
    d->second.port = where->second;
    d->second.deadline = now + cfg_.handshake_timeout;
    d->second.not_before = now;
    wake(false);
  }
  return hold();
}

std::chrono::milliseconds endpoint::start_dials() {
  auto now = clock_type::now();
  auto next = std::chrono::milliseconds{200};
  std::vector<std::tuple<std::string, std::string, uint16_t>> due;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    for (auto& [peer, d] : dials_) {
      if (d.conn) continue;
      if (d.not_before <= now) {
        due.emplace_back(peer, d.address, d.port);
        ++d.attempt;
      } else {
        next = std::min(next,
                        std::chrono::ceil<std::chrono::milliseconds>(d.not_before - now));
      }
    }
  }
  for (auto& [peer, address, port] : due) {
    auto c = open_async(address, port, false, peer);
    if (!c) {
      dial_failed(peer, nullptr, c.err().message);
      continue;
    }
    std::lock_guard<std::mutex> guard{mtx_};
    if (auto d = dials_.find(peer); d != dials_.end() && !d->second.conn)
      d->second.conn = *c;
  }
  return next;
}

void endpoint::on_connected(const conn_ptr& c) {
  int soerr = 0;
  socklen_t len = sizeof(soerr);
  if (::getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0) soerr = errno;
  if (soerr != 0)
    return close(c, "cannot connect to " + c->remote + ": " + std::strerror(soerr));
  tune(c->fd);
  {
    std::lock_guard<std::mutex> guard{c->send_mtx};
    c->connecting = false;
    if (!c->broken) flush_locked(*c);
  }
  attend(*c); // its events change: no longer waiting to be writable, unless queued
}

void endpoint::open_bulk(const std::string& peer, const std::string& dialled) {
  std::string address;
  uint16_t port = 0;
  if (!dialled.empty()) {
    auto colon = dialled.rfind(':');
    address = dialled.substr(0, colon);
    port = static_cast<uint16_t>(std::stoi(dialled.substr(colon + 1)));
  } else if (auto where = handlers_.resolve ? handlers_.resolve(peer) : std::nullopt) {
    std::tie(address, port) = *where;
  } else {
    return; // a peer nobody dials (a client): its bulk frames share the first
  }
  if (auto b = open_async(address, port, true, ""); !b)
    log(log_level::warn, "no bulk connection to node '" + peer + "': " + b.err().message);
}

void endpoint::release_held_locked(const std::string& peer, connection& c) {
  auto d = dials_.find(peer);
  if (d == dials_.end()) return;
  for (auto& m : d->second.held)
    enqueue(c, encode_frame_parts(m), lane_of(m));
  dials_.erase(d);
}

void endpoint::dial_failed(const std::string& peer, const conn_ptr& c,
                           const std::string& why, bool may_retry) {
  constexpr int attempts = 3;
  std::vector<message> held;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    auto d = dials_.find(peer);
    if (d == dials_.end() || d->second.conn != c) return;
    d->second.conn = nullptr;
    auto now = clock_type::now();
    // A node under a flood of idle connections may have closed this one to make room
    // before it could speak: tried again a few times, a little apart, within the dial's
    // time. Another secret is answered the same each time.
    if (may_retry && d->second.attempt < attempts && now < d->second.deadline) {
      auto jitter = std::uniform_int_distribution<int>{0, 9}(jitter_);
      d->second.not_before =
          now + std::chrono::milliseconds(5 * d->second.attempt + jitter);
      wake(false);
      return;
    }
    held = std::move(d->second.held);
    dials_.erase(d);
  }
  {
    std::lock_guard<std::mutex> guard{stats_mtx_};
    stats_.undelivered += held.size();
  }
  log(log_level::warn, "cannot reach node '" + peer + "': " + why + "; " +
                           std::to_string(held.size()) +
                           " message(s) sent to it are not delivered");
  if (handlers_.on_undelivered) handlers_.on_undelivered(peer, std::move(held), why);
}

result<std::string> endpoint::connect(const std::string& address, uint16_t port,
                                      std::chrono::milliseconds timeout) {
  auto where = address + ":" + std::to_string(port);
  auto deadline = clock_type::now() + timeout;
  // A node under a flood of idle connections may close this one to make room before it
  // could speak (when its thread was slow to run): tried again, a few times, within the
  // timeout. A refusal for another secret comes back as fast each time.
  constexpr int attempts = 3;
  std::string peer;
  for (int attempt = 1;; ++attempt) {
    auto opened = open(address, port, deadline);
    if (!opened) return opened.err();
    auto c = *opened;
    std::unique_lock<std::mutex> guard{mtx_};
    if (!auth_cv_.wait_until(guard, deadline, [&] {
          return c->state != connection::phase::handshaking;
        })) {
      std::lock_guard<std::mutex> send_guard{c->send_mtx};
      c->broken = true;
      c->broken_because = "handshake timed out";
      guard.unlock();
      attend(*c);
      return error{errc::node_unreachable, "no handshake with " + where + " within " +
                                               std::to_string(timeout.count()) + " ms"};
    }
    if (c->state != connection::phase::closed) {
      peer = c->peer;
      break;
    }
    if (attempt == attempts ||
        clock_type::now() + std::chrono::milliseconds(10) >= deadline)
      return error{errc::node_unreachable,
                   "connection to " + where + " refused: " + c->closed_because};
    guard.unlock();
    std::this_thread::sleep_for(std::chrono::milliseconds(5 * attempt));
  }
  return peer;
}

void endpoint::accept_all() {
  while (true) {
    sockaddr_in from{};
    socklen_t len = sizeof(from);
    int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&from), &len,
                       SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    auto remote = peer_address(from);
    // Every connection gets in; past the cap, at the cost of an unproven one that sent
    // nothing. Idle connections cannot lock out a peer that holds the secret, which
    // speaks at once and is through in a few round trips.
    if (auto victim = handshake_to_drop(remote))
      close(victim, std::string{make_room} + remote + ": " +
                        std::to_string(cfg_.max_handshaking) +
                        " connections were handshaking");
    tune(fd);
    auto c = std::make_shared<connection>(fd, remote, handshake::role::acceptor,
                                          local_address(fd), cfg_);
    enqueue(*c, encode_frame_parts(c->hs.own_hello()), lane::control);
    {
      std::lock_guard<std::mutex> guard{mtx_};
      conns_.push_back(c);
    }
    attend(*c);
  }
}

endpoint::conn_ptr endpoint::handshake_to_drop(const std::string& remote) const {
  std::lock_guard<std::mutex> guard{mtx_};
  auto host = host_of(remote);
  std::vector<conn_ptr> unproven;
  for (auto& c : conns_)
    if (c->accepted && c->state == connection::phase::handshaking) unproven.push_back(c);
  if (unproven.size() < cfg_.max_handshaking) return nullptr;
  std::sort(unproven.begin(), unproven.end(),
            [](auto& a, auto& b) { return a->opened < b->opened; });
  auto quiet = [](const conn_ptr& c) {
    return silent(c->fd, c->last_received.load(), c->opened.time_since_epoch().count());
  };
  // The oldest that sent nothing though it was polled (a peer holding the secret would
  // have spoken), of the new one's host first, so one host cannot push out another's.
  for (auto own_host : {true, false})
    for (auto& c : unproven)
      if (c->polled && (!own_host || host_of(c->remote) == host) && quiet(c)) return c;
  // Those not polled yet get the time to speak, up to four times the cap.
  if (unproven.size() < 4 * cfg_.max_handshaking) return nullptr;
  for (auto& c : unproven)
    if (quiet(c)) return c;
  return unproven.front();
}

void endpoint::close(const conn_ptr& c, const std::string& reason) {
  auto why = reason;
  if (c->hs.awaiting_peer_proof())
    why += " after this node's proof: the peer holds another cluster secret, or is not "
           "the node at " +
           c->remote;
  std::string peer;
  bool was_up = false;
  bool was_in_use = false;
  bool promoted = false;
  bool bulk = c->hs.bulk();
  std::vector<conn_ptr> cut; // the peer's other connections, when its bulk one was in use
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (c->state == connection::phase::closed) return;
    was_up = c->state == connection::phase::up;
    peer = c->peer;
    c->state = connection::phase::closed;
    c->closed_because = why;
    conns_.erase(std::remove(conns_.begin(), conns_.end(), c), conns_.end());
    if (was_up && bulk) {
      auto i = bulk_by_name_.find(peer);
      if (i != bulk_by_name_.end() && i->second == c) {
        was_in_use = true;
        bulk_by_name_.erase(i);
        bulk_dials_.erase(peer);
        // Its pulls in flight are lost with it: the peer's connections go down too, so
        // they fail (and are made again) instead of waiting. Not those opened after it:
        // they are a later incarnation of the peer's, with a bulk connection of its own.
        for (auto& other : conns_) {
          if (other->peer != peer || other->opened > c->opened) continue;
          std::lock_guard<std::mutex> send_guard{other->send_mtx};
          other->broken = true;
          other->broken_because = "its bulk connection closed: " + why;
          cut.push_back(other);
        }
      }
    } else if (was_up) {
      auto i = by_name_.find(peer);
      if (i != by_name_.end() && i->second == c) {
        was_in_use = true;
        by_name_.erase(i);
        bulk_dials_.erase(peer);
        if (auto other = spare_locked(peer, c)) {
          by_name_[peer] = other;
          promoted = true;
        }
      }
    }
    std::lock_guard<std::mutex> send_guard{c->send_mtx};
    c->broken = true;
    unwatch(c->on_bulk_loop, c);
    ::close(c->fd);
  }
  for (auto& other : cut)
    attend(*other);
  auth_cv_.notify_all();
  if (!was_up && !c->dialled_for.empty())
    dial_failed(c->dialled_for, c, why, !c->hs.awaiting_peer_proof());
  if (!was_up) {
    bool crowded = reason.rfind(crowded_out, 0) == 0 || reason.rfind(make_room, 0) == 0;
    size_t crowded_before = 0;
    {
      std::lock_guard<std::mutex> guard{stats_mtx_};
      ++stats_.refused;
      // A flood must not become a flood of log lines: those closed for the cap or the
      // pressure on it make one line a second at most.
      if (crowded) {
        auto now = clock_type::now();
        ++crowded_closed_;
        if (now - last_crowded_log_ < std::chrono::seconds(1)) return;
        crowded_before = crowded_closed_ - 1;
        crowded_closed_ = 0;
        last_crowded_log_ = now;
      }
    }
    log(log_level::warn,
        "closed connection with " + c->remote + " before authentication: " + why +
            (crowded_before ? " (and " + std::to_string(crowded_before) +
                                  " more for the cap since the last such line)"
                            : ""));
    return;
  }
  // A peer that hangs up is churn (a `swarm status` query, a node stopping); a bad frame
  // is a fault of the peer's.
  auto level = reason == peer_closed             ? log_level::debug
               : reason.rfind(bad_frame, 0) == 0 ? log_level::warn
                                                 : log_level::info;
  bool idle = false;
  {
    std::lock_guard<std::mutex> guard{c->send_mtx};
    idle = c->retiring;
  }
  if (idle) level = log_level::debug;
  log(level, "closed " +
                 std::string{idle         ? "an idle "
                             : was_in_use ? ""
                                          : "a spare "} +
                 (bulk ? "bulk connection" : "connection") + " with node '" + peer +
                 "' (" + c->remote + "): " + why);
  // Only the connection in use speaks for the peer: closing a spare reports nothing.
  if (!was_in_use || bulk) return;
  if (handlers_.on_peer_down) handlers_.on_peer_down(peer, why);
  if (promoted && handlers_.on_peer_up) handlers_.on_peer_up(peer);
}

void endpoint::on_readable(const conn_ptr& c) {
  std::vector<message> msgs;
  // Bounded per round so one busy peer cannot starve the others.
  for (int round = 0; round < 8; ++round) {
    // Straight into the decoder's buffer; a large frame gets room for all of it.
    auto [room, cap] = c->decoder.prepare(read_chunk);
    auto n = ::recv(c->fd, room, cap, 0);
    if (n > 0)
      c->last_received.store(clock_type::now().time_since_epoch().count(),
                             std::memory_order_relaxed);
    if (n == 0) {
      // A retiring connection whose peer shut its side first still writes out what it
      // holds, then closes.
      bool draining = false;
      {
        std::lock_guard<std::mutex> guard{c->send_mtx};
        draining = c->retiring && !c->broken && c->pending_locked();
        c->peer_shut = draining;
      }
      if (!draining) return close(c, std::string{peer_closed});
      attend(*c);
      return;
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      if (errno == EINTR) continue;
      return close(c, sys_error("read failed"));
    }
    msgs.clear();
    auto ok = c->decoder.commit(static_cast<size_t>(n), msgs);
    // Before authentication the decoder hands over one frame at a time: what follows the
    // proof in the same read is decoded under the limits the proof earned.
    while (ok && !msgs.empty()) {
      for (auto& m : msgs) {
        std::vector<message> reply;
        auto was_up = c->hs.authenticated();
        auto for_app = c->hs.accept(m, reply);
        if (!for_app) return close(c, for_app.err().message);
        for (auto& r : reply)
          enqueue(*c, encode_frame_parts(r), lane::control);
        if (!was_up && c->hs.authenticated()) on_authenticated(c);
        if (!*for_app) continue;
        if (std::holds_alternative<goodbye>(m)) {
          retire(c, false);
          continue;
        }
        {
          std::lock_guard<std::mutex> guard{stats_mtx_};
          ++stats_.frames_received[static_cast<size_t>(lane_of(m))];
        }
        if (handlers_.on_message) handlers_.on_message(c->peer, std::move(m));
      }
      msgs.clear();
      ok = c->decoder.commit(0, msgs);
    }
    if (!ok) return close(c, std::string{bad_frame} + ok.err().message);
    if (c->hs.bulk() && c->hs.authenticated() && !c->on_bulk_loop) {
      // From here on the bulk I/O thread reads it; this one no longer touches it.
      unwatch(false, c);
      c->on_bulk_loop = true;
      attend(*c);
      return;
    }
    if (static_cast<size_t>(n) < cap) return;
  }
}

void endpoint::on_authenticated(const conn_ptr& c) {
  bool spare = false;
  bool bulk = c->hs.bulk();
  if (!c->dialled_for.empty() && c->hs.peer_name() != c->dialled_for) {
    auto why =
        c->remote + " is node '" + c->hs.peer_name() + "', not '" + c->dialled_for + "'";
    dial_failed(c->dialled_for, c, why, false);
    return close(c, why);
  }
  {
    std::lock_guard<std::mutex> guard{mtx_};
    c->state = connection::phase::up;
    c->peer = c->hs.peer_name();
    spare = !(bulk ? bulk_by_name_ : by_name_).emplace(c->peer, c).second;
    // What was sent while dialling goes first, on the connection in use (this one, or
    // one the peer dialled meanwhile).
    if (!bulk) release_held_locked(c->peer, *by_name_.at(c->peer));
  }
  c->decoder.set_limits(cfg_.max_frame_bytes, static_cast<size_t>(-1));
  mark(c->fd, bulk ? traffic_class::bulk : traffic_class::control);
  if (handlers_.land)
    c->decoder.set_lander([land = handlers_.land,
                           peer = c->peer](const object_chunk& header, uint64_t size) {
      return land(peer, header, size);
    });
  auth_cv_.notify_all();
  if (bulk) {
    if (spare)
      log(log_level::debug, "a second bulk connection with node '" + c->peer + "' (" +
                                c->remote + ") is kept as a spare");
    return;
  }
  // A second connection under a name in use neither replaces nor downs the first: it
  // waits as a spare, taking over if the first closes.
  if (spare)
    log(log_level::debug, "a second connection from node '" + c->peer + "' (" +
                              c->remote + ") is kept as a spare");
  else if (handlers_.on_peer_up)
    handlers_.on_peer_up(c->peer);
}

endpoint::conn_ptr endpoint::spare_locked(const std::string& peer,
                                          const conn_ptr& not_this) const {
  for (auto& other : conns_) {
    if (other == not_this || other->state != connection::phase::up ||
        other->peer != peer || other->hs.bulk())
      continue;
    std::lock_guard<std::mutex> guard{other->send_mtx};
    if (!other->retiring) return other;
  }
  return nullptr;
}

void endpoint::retire_idle() {
  auto now = clock_type::now();
  auto idle_since = (now - cfg_.idle_close).time_since_epoch().count();
  std::map<std::string, std::vector<conn_ptr>> of_peer;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    for (auto& c : conns_)
      if (c->state == connection::phase::up && !dials_.count(c->peer))
        of_peer[c->peer].push_back(c);
  }
  for (auto& [peer, conns] : of_peer) {
    // Every connection with the peer idle both ways, nothing queued; one retiring too
    // long (its peer never closed its side) is cut.
    bool idle = true;
    std::vector<conn_ptr> going;
    for (auto& c : conns) {
      std::unique_lock<std::mutex> guard{c->send_mtx};
      if (c->retiring) {
        if (now - c->retired_at > cfg_.handshake_timeout && !c->broken) {
          c->broken = true;
          c->broken_because = "idle, and the peer did not close its side within " +
                              std::to_string(cfg_.handshake_timeout.count()) + " ms";
          guard.unlock();
          attend(*c);
        }
        continue;
      }
      if (c->pending_locked() ||
          c->last_sent.load(std::memory_order_relaxed) > idle_since ||
          c->last_received.load(std::memory_order_relaxed) > idle_since)
        idle = false;
      going.push_back(c);
    }
    // Only a peer that can be dialled again: a client (nobody dials it) keeps its own.
    if (!idle || going.empty() || !handlers_.resolve || !handlers_.resolve(peer))
      continue;
    for (auto& c : going)
      retire(c, true);
  }
}

void endpoint::retire(const conn_ptr& c, bool initiator) {
  bool bulk = c->hs.bulk();
  {
    std::lock_guard<std::mutex> guard{mtx_};
    // Out of use: what goes to the peer from now on takes another connection, or dials.
    auto& in_use = bulk ? bulk_by_name_ : by_name_;
    if (auto i = in_use.find(c->peer); i != in_use.end() && i->second == c) {
      in_use.erase(i);
      bulk_dials_.erase(c->peer);
      if (!bulk)
        if (auto other = spare_locked(c->peer, c)) in_use[c->peer] = other;
    }
    std::lock_guard<std::mutex> send_guard{c->send_mtx};
    if (c->retiring) return;
    c->retiring = true;
    c->retired_at = clock_type::now();
    // The goodbye goes last on it: the peer reads all that was sent before.
    if (initiator)
      c->queued[static_cast<size_t>(lane::control)].push_back(encode_frame_parts(
          goodbye{"idle for " + std::to_string(cfg_.idle_close.count()) + " ms"}));
  }
  {
    std::lock_guard<std::mutex> guard{stats_mtx_};
    ++stats_.idle_closed;
  }
  attend(*c);
}

void endpoint::shut_if_done_locked(connection& c) {
  // Retiring and all sent: this side is done (the peer reads to the end, then closes
  // its side, which this one reads as the end).
  if (!c.retiring || c.shut || c.broken || c.pending_locked()) return;
  ::shutdown(c.fd, SHUT_WR);
  c.shut = true;
}

void endpoint::watch(bool bulk, const conn_ptr& c,
                     std::vector<std::pair<conn_ptr, std::string>>& to_close) {
  // Handed to the bulk loop after whoever attended to it here read where it was.
  if (c->on_bulk_loop != bulk) {
    if (!bulk) attend(*c);
    return;
  }
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (c->state == connection::phase::closed) return;
  }
  uint32_t want = EPOLLIN;
  {
    std::lock_guard<std::mutex> guard{c->send_mtx};
    if (c->broken) {
      to_close.emplace_back(c, c->broken_because);
      return;
    }
    if (c->peer_shut) {
      if (!c->pending_locked()) {
        to_close.emplace_back(c, "idle, closed at both ends");
        return;
      }
      want = 0; // nothing more to read
    }
    if (c->pending_locked()) want |= EPOLLOUT;
    shut_if_done_locked(*c);
  }
  auto& regs = registered_[bulk];
  epoll_event ev{};
  ev.events = want;
  ev.data.fd = c->fd;
  auto r = regs.find(c->fd);
  if (r == regs.end() || r->second.conn != c) {
    // (An entry of another connection is stale: its fd was closed and taken again.)
    if (::epoll_ctl(epoll_fds_[bulk], EPOLL_CTL_ADD, c->fd, &ev) != 0) {
      to_close.emplace_back(c, sys_error("epoll_ctl"));
      return;
    }
    regs[c->fd] = {c, want};
    if (!c->hs.authenticated()) unproven_[bulk].push_back(c);
  } else if (r->second.events != want) {
    ::epoll_ctl(epoll_fds_[bulk], EPOLL_CTL_MOD, c->fd, &ev);
    r->second.events = want;
  }
}

void endpoint::unwatch(bool bulk, const conn_ptr& c) {
  auto& regs = registered_[bulk];
  auto r = regs.find(c->fd);
  if (r == regs.end() || r->second.conn != c) return;
  ::epoll_ctl(epoll_fds_[bulk], EPOLL_CTL_DEL, c->fd, nullptr);
  regs.erase(r);
}

void endpoint::run(bool bulk) {
  std::vector<epoll_event> events(256);
  auto wake_fd = bulk ? bulk_wake_fd_ : wake_fd_;
  auto& regs = registered_[bulk];
  auto& unproven = unproven_[bulk];
  std::vector<conn_ptr> todo;
  auto idle_checked = clock_type::now();
  while (!stop_) {
    auto wait = bulk ? std::chrono::milliseconds{200} : start_dials();
    if (!bulk && cfg_.idle_close.count() > 0 &&
        clock_type::now() - idle_checked >=
            std::min<clock_type::duration>(std::chrono::seconds(1),
                                           cfg_.idle_close / 4)) {
      idle_checked = clock_type::now();
      retire_idle();
    }
    std::vector<std::pair<conn_ptr, std::string>> to_close;
    // What other threads changed: new connections, frames queued, broken ones. Only
    // these are looked at, not every connection.
    {
      std::lock_guard<std::mutex> guard{attention_mtx_};
      todo.swap(attention_[bulk]);
    }
    for (auto& c : todo)
      watch(bulk, c, to_close);
    todo.clear();
    // Those not proven yet are timed (a bounded few: the handshaking cap).
    unproven.erase(std::remove_if(unproven.begin(), unproven.end(),
                                  [&](const conn_ptr& c) {
                                    auto r = regs.find(c->fd);
                                    return c->hs.authenticated() || r == regs.end() ||
                                           r->second.conn != c;
                                  }),
                   unproven.end());
    auto accepted = static_cast<size_t>(std::count_if(
        unproven.begin(), unproven.end(), [](const conn_ptr& c) { return c->accepted; }));
    // Under pressure (half the cap handshaking), a connection that sent nothing gets a
    // fifth of the time to start.
    bool pressed = accepted >= std::max<size_t>(cfg_.max_handshaking / 2, 1);
    auto idle_limit = pressed ? cfg_.handshake_timeout / 5 : cfg_.handshake_timeout;
    auto now = clock_type::now();
    for (auto& c : unproven) {
      if (now - c->opened > cfg_.handshake_timeout)
        to_close.emplace_back(c, "no handshake within " +
                                     std::to_string(cfg_.handshake_timeout.count()) +
                                     " ms");
      else if (c->accepted && now - c->opened > idle_limit &&
               silent(c->fd, c->last_received.load(),
                      c->opened.time_since_epoch().count()))
        to_close.emplace_back(
            c, std::string{crowded_out} + " " +
                   std::to_string(
                       std::chrono::duration_cast<std::chrono::milliseconds>(idle_limit)
                           .count()) +
                   " ms while many connections were handshaking");
    }
    for (auto& [c, why] : to_close)
      close(c, why);
    if (!to_close.empty()) continue;
    // Woken at least every 200 ms for the timeouts above.
    auto n =
        ::epoll_wait(epoll_fds_[bulk], events.data(), static_cast<int>(events.size()),
                     static_cast<int>(wait.count()));
    if (n < 0) {
      if (errno != EINTR) log(log_level::error, sys_error("epoll_wait failed"));
      continue;
    }
    for (auto& c : unproven)
      c->polled = true;
    for (int i = 0; i < n; ++i) {
      auto fd = events[static_cast<size_t>(i)].data.fd;
      auto got = events[static_cast<size_t>(i)].events;
      if (fd == wake_fd) {
        uint64_t v;
        [[maybe_unused]] auto r = ::read(wake_fd, &v, sizeof(v));
        continue;
      }
      if (!bulk && fd == listen_fd_) {
        accept_all();
        continue;
      }
      auto r = regs.find(fd);
      if (r == regs.end()) continue; // closed by an earlier event of this round
      auto c = r->second.conn;
      bool connecting = false, pending = false, broken = false;
      std::string why;
      {
        std::lock_guard<std::mutex> guard{c->send_mtx};
        connecting = c->connecting;
        if (!connecting && (got & EPOLLOUT) && !c->broken) flush_locked(*c);
        pending = c->pending_locked();
        shut_if_done_locked(*c);
        broken = c->broken;
        if (broken) why = c->broken_because;
        if (!broken && c->peer_shut && !pending) {
          broken = true;
          why = "idle, closed at both ends";
        }
      }
      if (connecting) {
        on_connected(c);
        continue;
      }
      if (broken) {
        close(c, why);
        continue;
      }
      // All written: only reads are waited for again (a sender that queues more
      // attends to it).
      if ((got & EPOLLOUT) && !pending) {
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.fd = fd;
        ::epoll_ctl(epoll_fds_[bulk], EPOLL_CTL_MOD, fd, &ev);
        r->second.events = EPOLLIN;
      }
      if (got & (EPOLLIN | EPOLLHUP | EPOLLERR)) on_readable(c);
    }
  }
}

} // namespace swarm::wire_msg
