#include "transport/endpoint.hpp"

// The I/O loops: each keeps its sockets registered with epoll and looks only at the
// connections other threads changed, and at those not proven yet.

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>

#include "transport/endpoint_connection.hpp"
#include "transport/endpoint_sockets.hpp"

namespace swarm::wire_msg {

using namespace endpoint_sockets;

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
    if (c->wants_write_locked()) want |= EPOLLOUT;
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
  auto trim_checked = idle_checked;
  while (!stop_) {
    auto wait = bulk ? std::chrono::milliseconds{200} : start_dials();
    if (!bulk && cfg_.idle_close.count() > 0 &&
        clock_type::now() - idle_checked >=
            std::min<clock_type::duration>(std::chrono::seconds(1),
                                           cfg_.idle_close / 4)) {
      idle_checked = clock_type::now();
      retire_idle();
    }
    if (cfg_.trim_after.count() > 0 &&
        clock_type::now() - trim_checked >=
            std::min<clock_type::duration>(std::chrono::seconds(1),
                                           cfg_.trim_after / 2)) {
      trim_checked = clock_type::now();
      trim_quiet(bulk);
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
        accept_pending();
        continue;
      }
      auto r = regs.find(fd);
      if (r == regs.end()) continue; // closed by an earlier event of this round
      auto c = r->second.conn;
      bool connecting = false, pending = false, writing = false, broken = false;
      std::string why;
      {
        std::lock_guard<std::mutex> guard{c->send_mtx};
        connecting = c->connecting;
        if (!connecting && (got & EPOLLOUT) && !c->broken) flush_locked(*c);
        pending = c->pending_locked();
        writing = c->wants_write_locked();
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
      if ((got & EPOLLOUT) && !writing) {
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.fd = fd;
        ::epoll_ctl(epoll_fds_[bulk], EPOLL_CTL_MOD, fd, &ev);
        r->second.events = EPOLLIN;
      }
      if (got & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
        on_readable(c);
        c->read_buffer_bytes.store(c->decoder.held_bytes(), std::memory_order_relaxed);
      }
    }
  }
}

} // namespace swarm::wire_msg
