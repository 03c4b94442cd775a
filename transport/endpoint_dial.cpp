#include "transport/endpoint.hpp"

// Connections this node makes: waited for (`connect`), or dialled for a send without
// waiting, with what is sent meanwhile held, and bulk connections opened on demand.

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <thread>
#include <tuple>

#include "transport/endpoint_connection.hpp"
#include "transport/endpoint_sockets.hpp"

namespace swarm::wire_msg {

using namespace endpoint_sockets;

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
  tune(fd, cfg_.unacked_timeout);
  return add_dialled(fd, where, false, "", false);
}

result<endpoint::conn_ptr> endpoint::open_async(const std::string& address, uint16_t port,
                                                bool bulk,
                                                const std::string& dialled_for) {
  auto started = start_connect(address, port);
  if (!started) return started.err();
  auto [fd, done] = *started;
  if (done) tune(fd, cfg_.unacked_timeout);
  return add_dialled(fd, address + ":" + std::to_string(port), bulk, dialled_for, !done);
}

endpoint::conn_ptr endpoint::add_dialled(int fd, const std::string& where, bool bulk,
                                         const std::string& dialled_for,
                                         bool connecting) {
  auto c = std::make_shared<connection>(fd, where, handshake::role::initiator, where,
                                        cfg_, bulk);
  c->dialled_for = dialled_for;
  c->connecting = connecting;
  secure(*c);
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
  tune(c->fd, cfg_.unacked_timeout);
  {
    std::lock_guard<std::mutex> guard{c->send_mtx};
    c->connecting = false;
    if (!c->broken) flush_locked(*c);
  }
  attend(*c); // its events change: no longer waiting to be writable, unless queued
}

bool endpoint::open_bulk(const std::string& peer, const std::string& dialled) {
  std::string address;
  uint16_t port = 0;
  if (!dialled.empty()) {
    address = host_of(dialled);
    port = port_of(dialled);
  } else if (auto where = handlers_.resolve ? handlers_.resolve(peer) : std::nullopt) {
    std::tie(address, port) = *where;
  } else {
    return false; // a peer nobody dials (a client): its bulk frames share the first
  }
  auto b = open_async(address, port, true, peer);
  if (!b)
    log(log_level::warn, "no bulk connection to node '" + peer + "': " + b.err().message);
  return b.has_value();
}

void endpoint::release_bulk_held_locked(const std::string& peer, connection& c) {
  auto h = bulk_held_.find(peer);
  if (h == bulk_held_.end()) return;
  for (auto& m : h->second)
    enqueue(c, encode_frame_parts(m), lane::bulk);
  bulk_held_.erase(h);
}

void endpoint::send_bulk_held(const std::string& peer) {
  std::vector<message> held;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    auto h = bulk_held_.find(peer);
    if (h == bulk_held_.end()) return;
    held = std::move(h->second);
    bulk_held_.erase(h);
  }
  for (auto& m : held)
    if (auto sent = send(peer, m); !sent)
      log(log_level::debug,
          "a chunk for node '" + peer + "' was not sent: " + sent.err().message);
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

} // namespace swarm::wire_msg
