#include "transport/endpoint.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <string>

#include "transport/endpoint_connection.hpp"
#include "transport/endpoint_sockets.hpp"
#include "transport/handshake.hpp"
#include "transport/traffic_class.hpp"
#include "transport/wire_codec.hpp"

namespace swarm::wire_msg {

using namespace endpoint_sockets;

result<std::unique_ptr<endpoint>> endpoint::start(endpoint_config cfg,
                                                  endpoint_handlers h) {
  std::unique_ptr<endpoint> ep{new endpoint(std::move(cfg), std::move(h))};
  ep->wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  ep->bulk_wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (ep->wake_fd_ < 0 || ep->bulk_wake_fd_ < 0)
    return error{errc::invalid_argument, sys_error("eventfd")};
  if (ep->cfg_.tls.use != tls_options::mode::off) {
    auto tls = tls_context::make(ep->cfg_.tls, ep->cfg_.secret);
    if (!tls) return tls.err();
    ep->tls_ = std::move(*tls);
  } else if (ep->cfg_.listen && !ep->cfg_.listen_address.empty() &&
             tls_required(tls_options::mode::automatic, ep->cfg_.listen_address)) {
    ep->log(log_level::warn, "TLS is off ([tls] mode = \"off\"): frames to and from " +
                                 ep->cfg_.listen_address +
                                 " cross the network unencrypted");
  }
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

endpoint::counters endpoint::stats() const {
  counters out;
  {
    std::lock_guard<std::mutex> guard{stats_mtx_};
    out = stats_;
  }
  std::lock_guard<std::mutex> guard{mtx_};
  out.connections = conns_.size();
  out.peers = by_name_.size();
  for (auto& c : conns_)
    out.read_buffer_bytes += c->read_buffer_bytes.load(std::memory_order_relaxed);
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

bool endpoint::write_locked(connection& c, const frame_parts& f, size_t& off,
                            const char* what) {
  while (off < f.size()) {
    auto n = send_from(c.fd, f, off);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
      if (errno == EINTR) continue;
      c.broken = true;
      c.broken_because = sys_error(what);
      return false;
    }
    off += static_cast<size_t>(n);
  }
  return true;
}

bool endpoint::flush_locked(connection& c) {
  if (c.connecting || c.tls_undecided) return true;
  if (c.tls) {
    // The TLS handshake's own bytes go first.
    if (!write_locked(c, c.tls_out, c.tls_out_off,
                      "write failed during the TLS handshake"))
      return false;
    if (c.tls_out_off < c.tls_out.size()) return true;
    c.tls_out = {};
    c.tls_out_off = 0;
    if (!c.tls->ready()) return true;
  }
  while (true) {
    if (c.current.size() == 0) {
      auto next = std::find_if(c.queued.begin(), c.queued.end(),
                               [](auto& q) { return !q.empty(); });
      if (next == c.queued.end()) return true;
      c.start_locked(std::move(next->front()));
      next->pop_front();
    }
    if (!write_locked(c, c.current, c.current_off, "write failed")) return false;
    if (c.current_off < c.current.size()) return true;
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
    c.start_locked(std::move(frame));
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
    bool waits = false;                 // for the bulk connection
    {
      std::lock_guard<std::mutex> guard{mtx_};
      c = connection_to_locked(peer, l);
      // The first bulk frame for a peer opens its bulk connection; it and those that
      // follow wait for that to be up (or to fail: then they share the first).
      if (c && l == lane::bulk && cfg_.bulk_connection && !c->hs.bulk()) {
        if (bulk_dials_.insert(peer).second) {
          bulk_to = c->accepted ? std::string{} : c->remote;
          bulk_held_[peer];
        }
        if (auto h = bulk_held_.find(peer); h != bulk_held_.end()) {
          h->second.push_back(m);
          waits = true;
        }
      }
    }
    if (bulk_to && !open_bulk(peer, *bulk_to)) send_bulk_held(peer);
    if (waits) return {};
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

void endpoint::accept_pending() {
  // A bounded few per round (the listening socket is level-triggered: the rest wait for
  // the next), so the hellos of those accepted are read between a flood's connects.
  for (int accepted = 0; accepted < 4; ++accepted) {
    sockaddr_in from{};
    socklen_t len = sizeof(from);
    int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&from), &len,
                       SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    auto remote = peer_address(from);
    // Every connection gets in; past the cap, at the cost of an unproven one that sent
    // nothing. Idle connections cannot lock out a peer that holds the secret, which
    // speaks at once and is through in a few round trips.
    if (auto victim = handshake_to_drop(remote, local_address(fd)); victim.conn)
      close(victim.conn, std::string{make_room} + remote + ": " + victim.over);
    tune(fd, cfg_.unacked_timeout);
    auto c = std::make_shared<connection>(fd, remote, handshake::role::acceptor,
                                          local_address(fd), cfg_);
    secure(*c);
    enqueue(*c, encode_frame_parts(c->hs.own_hello()), lane::control);
    {
      std::lock_guard<std::mutex> guard{mtx_};
      conns_.push_back(c);
    }
    attend(*c);
  }
}

endpoint::eviction endpoint::handshake_to_drop(const std::string& remote,
                                               const std::string& local) const {
  auto host = host_of(remote);
  std::vector<conn_ptr> unproven;
  std::set<std::string> proved; // of the names the unproven ones claim
  size_t cap = cfg_.max_handshaking;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    for (auto& c : conns_)
      if (c->accepted && c->state == connection::phase::handshaking) {
        unproven.push_back(c);
        if (auto& name = c->hs.peer_name(); proved_.count(name)) proved.insert(name);
      }
    cap = std::max(cap, 2 * by_name_.size());
  }
  std::vector<conn_ptr> own; // from the new one's address
  for (auto& c : unproven)
    if (host_of(c->remote) == host) own.push_back(c);
  // Not for this host's own address: nodes sharing a host (one large machine, a test)
  // dial from it together, at a start or a head's restart, and the cap bounds them.
  auto per_source = host == host_of(local)
                        ? std::numeric_limits<size_t>::max()
                        : std::max(cfg_.max_handshaking_per_source, cap / 4);
  if (own.size() < per_source && unproven.size() < cap) return {};
  auto by_age = [](auto& a, auto& b) { return a->opened < b->opened; };
  std::sort(unproven.begin(), unproven.end(), by_age);
  std::sort(own.begin(), own.end(), by_age);
  // Vouched for: its hello names a peer that proved the secret here before, or that the
  // node knows, and no more than a peer's two connections (control, bulk) claim it.
  std::map<std::string, size_t> claims;
  for (auto& c : unproven)
    if (!c->hs.peer_name().empty()) ++claims[c->hs.peer_name()];
  std::map<std::string, bool> known; // each name asked of `resolve` once
  auto vouched = [&](const conn_ptr& c) {
    auto& name = c->hs.peer_name();
    if (name.empty() || claims[name] > 2) return false;
    if (proved.count(name)) return true;
    auto [i, fresh] = known.emplace(name, false);
    if (fresh) i->second = handlers_.resolve && handlers_.resolve(name).has_value();
    return i->second;
  };
  auto quiet = [](const conn_ptr& c) {
    return c->polled &&
           silent(c->fd, c->last_received.load(), c->opened.time_since_epoch().count());
  };
  // The oldest of `among` not vouched for (`only_quiet`: that sent nothing though it was
  // polled: a peer holding the secret would have spoken).
  auto oldest = [&](const std::vector<conn_ptr>& among, bool only_quiet) -> conn_ptr {
    for (auto& c : among)
      if (!vouched(c) && (!only_quiet || quiet(c))) return c;
    return nullptr;
  };
  // An address past its share makes room among its own.
  if (own.size() >= per_source) {
    auto over = std::to_string(own.size()) + " connections from " + host +
                " were handshaking (at most " + std::to_string(per_source) +
                " from one address)";
    for (auto only_quiet : {true, false})
      if (auto c = oldest(own, only_quiet)) return {c, over};
    return {own.front(), over};
  }
  // Past the cap: the oldest quiet one, of the new one's address first.
  auto over = std::to_string(unproven.size()) +
              " connections were handshaking (at most " + std::to_string(cap) + ")";
  for (auto* among : {&own, &unproven})
    if (auto c = oldest(*among, true)) return {c, over};
  // Those not polled yet get the time to speak, up to four times the cap.
  if (unproven.size() < 4 * cap) return {};
  if (auto c = oldest(unproven, false)) return {c, over};
  return {unproven.front(), over};
}

void endpoint::remember_proved_locked(const std::string& peer) {
  proved_[peer] = clock_type::now();
  if (proved_.size() <= proved_kept) return;
  proved_.erase(std::min_element(proved_.begin(), proved_.end(),
                                 [](auto& a, auto& b) { return a.second < b.second; }));
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
  if (!was_up && !c->dialled_for.empty()) {
    if (bulk)
      send_bulk_held(c->dialled_for);
    else
      dial_failed(c->dialled_for, c, why, !c->hs.awaiting_peer_proof());
  }
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
  if (c->tls_undecided && !decide_tls(c)) return;
  if (c->tls && !c->tls->ready() && !tls_handshake(c)) return;
  std::vector<message> msgs;
  // While the socket holds more, a peer's frames are read before they are decoded, so
  // that its urgent ones among them go first (plain TCP; a record opens a few at once).
  // Whatever way the reading ends, what was read is decoded first; false: closed.
  bool held = false;
  auto decode_held = [&] {
    if (!held) return true;
    held = false;
    msgs.clear();
    return deliver(c, c->decoder.commit(0, msgs), msgs);
  };
  // Bounded per round so one busy peer cannot starve the others.
  constexpr int rounds = 8;
  for (int round = 0; round < rounds; ++round) {
    // Straight into the decoder's buffer (a large frame gets room for all of it), or
    // under TLS into the records' buffer.
    auto [room, cap] =
        c->tls ? c->tls->opener().prepare(read_chunk) : c->decoder.prepare(read_chunk);
    auto n = ::recv(c->fd, room, cap, 0);
    if (n > 0)
      c->last_received.store(clock_type::now().time_since_epoch().count(),
                             std::memory_order_relaxed);
    if (n == 0) {
      if (!decode_held()) return;
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
      if (errno == EINTR) continue;
      if (!decode_held()) return;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      return close(c, sys_error("read failed"));
    }
    bool more = static_cast<size_t>(n) == cap && round + 1 < rounds &&
                c->decoder.buffered() + static_cast<size_t>(n) < read_ahead;
    if (c->tls) {
      if (!open_records(c, static_cast<size_t>(n), msgs)) return;
    } else if (more && c->hs.authenticated() && !c->hs.bulk() &&
               c->decoder.hold(static_cast<size_t>(n))) {
      held = true;
      continue;
    } else {
      held = false;
      msgs.clear();
      if (!deliver(c, c->decoder.commit(static_cast<size_t>(n), msgs), msgs)) return;
    }
    if (c->hs.bulk() && c->hs.authenticated() && !c->on_bulk_loop) {
      // From here on the bulk I/O thread reads it; this one no longer touches it.
      unwatch(false, c);
      c->on_bulk_loop = true;
      attend(*c);
      return;
    }
    if (static_cast<size_t>(n) < cap) return;
  }
  decode_held();
}

bool endpoint::deliver(const conn_ptr& c, result<void> ok, std::vector<message>& msgs) {
  // Before authentication the decoder hands over one frame at a time: what follows the
  // proof in the same read is decoded under the limits the proof earned.
  while (ok && !msgs.empty()) {
    for (auto& m : msgs) {
      std::vector<message> reply;
      auto was_up = c->hs.authenticated();
      auto for_app = c->hs.accept(m, reply);
      if (!for_app) {
        close(c, for_app.err().message);
        return false;
      }
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
  if (!ok) {
    close(c, std::string{bad_frame} + ok.err().message);
    return false;
  }
  return true;
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
    remember_proved_locked(c->peer);
    spare = !(bulk ? bulk_by_name_ : by_name_).emplace(c->peer, c).second;
    // What was sent while dialling goes first, on the connection in use (this one, or
    // one the peer dialled meanwhile).
    if (!bulk) release_held_locked(c->peer, *by_name_.at(c->peer));
    if (bulk && !spare) release_bulk_held_locked(c->peer, *c);
  }
  c->decoder.set_limits(cfg_.max_frame_bytes, static_cast<size_t>(-1));
  c->decoder.set_urgent_ahead(true);
  mark(c->fd, bulk ? traffic_class::bulk : traffic_class::control);
  // A bulk connection does not speak for its peer (heartbeats on the first one do): a
  // reader slow to take chunks (a busy host, a destination paging in) must not make the
  // sender's kernel give up on it, which would cut the peer's other connections too.
  if (bulk) unbound_unacked(c->fd);
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

} // namespace swarm::wire_msg
