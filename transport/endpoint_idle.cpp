#include "transport/endpoint.hpp"

// Connections closed as idle: taken out of use, a goodbye, each side shutting its own.

#include <sys/socket.h>

#include <map>

#include "transport/endpoint_connection.hpp"
#include "transport/endpoint_sockets.hpp"

namespace swarm::wire_msg {

using namespace endpoint_sockets;

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

void endpoint::trim_quiet(bool bulk) {
  auto quiet_since = (clock_type::now() - cfg_.trim_after).time_since_epoch().count();
  for (auto& entry : registered_[bulk]) {
    auto& c = *entry.second.conn;
    if (c.read_buffer_bytes.load(std::memory_order_relaxed) <= read_chunk ||
        c.last_received.load(std::memory_order_relaxed) > quiet_since)
      continue;
    c.decoder.trim(read_chunk);
    c.read_buffer_bytes.store(c.decoder.held_bytes(), std::memory_order_relaxed);
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

} // namespace swarm::wire_msg
