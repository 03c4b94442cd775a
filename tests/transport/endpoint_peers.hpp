#pragma once

// The endpoint tests' peers: an inbox to wait on, raw sockets that speak (or do not
// speak) the handshake, and the process's memory.

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "transport/endpoint.hpp"
#include "transport/handshake.hpp"
#include "transport/traffic_class.hpp"
#include "transport/wire_codec.hpp"

namespace swarm::endpoint_test {

using namespace swarm::wire_msg;
using namespace std::chrono_literals;

inline const std::string secret = "a-cluster-secret-of-some-length";

/// What one endpoint received, for tests to wait on (bounded).
struct inbox {
  std::mutex mtx;
  std::condition_variable cv;
  std::vector<std::pair<std::string, message>> got;
  std::vector<std::string> down;
  std::vector<std::string> logs;
  bool hold =
      false; // a slow receiver: the first message stalls its reader until released
  bool hold_bulk_only = false; // ... the first bulk one only
  // Where peers listen, for sends that dial; and what such dials could not deliver.
  std::map<std::string, std::pair<std::string, uint16_t>> where;
  std::vector<std::pair<std::string, std::vector<message>>> undelivered;
  std::vector<std::string> undelivered_why;

  void release() {
    std::lock_guard<std::mutex> g{mtx};
    hold = false;
    cv.notify_all();
  }

  endpoint_handlers handlers() {
    endpoint_handlers h;
    h.on_message = [this](const std::string& peer, message&& m) {
      std::unique_lock<std::mutex> g{mtx};
      if (!hold_bulk_only || lane_of(m) == lane::bulk)
        cv.wait_for(g, 10s, [this] { return !hold; });
      got.emplace_back(peer, std::move(m));
      cv.notify_all();
    };
    h.on_peer_down = [this](const std::string& peer, const std::string&) {
      std::lock_guard<std::mutex> g{mtx};
      down.push_back(peer);
      cv.notify_all();
    };
    h.resolve =
        [this](
            const std::string& peer) -> std::optional<std::pair<std::string, uint16_t>> {
      std::lock_guard<std::mutex> g{mtx};
      if (auto i = where.find(peer); i != where.end()) return i->second;
      return std::nullopt;
    };
    h.on_undelivered = [this](const std::string& peer, std::vector<message>&& held,
                              const std::string& why) {
      std::lock_guard<std::mutex> g{mtx};
      undelivered.emplace_back(peer, std::move(held));
      undelivered_why.push_back(why);
      cv.notify_all();
    };
    h.log = [this](swarm::log_level, const std::string& line) {
      std::lock_guard<std::mutex> g{mtx};
      logs.push_back(line);
      cv.notify_all();
    };
    return h;
  }

  template <class Pred> bool wait(Pred p, std::chrono::milliseconds t = 5s) {
    std::unique_lock<std::mutex> g{mtx};
    return cv.wait_for(g, t, [&] { return p(*this); });
  }
};

inline std::unique_ptr<endpoint> start(const std::string& name, inbox& in,
                                       const std::string& key = secret,
                                       size_t max_handshaking = 64,
                                       bool bulk_connection = true,
                                       std::chrono::milliseconds idle_close = 0ms,
                                       size_t max_handshaking_per_source = 16) {
  endpoint_config cfg;
  cfg.bulk_connection = bulk_connection;
  cfg.name = name;
  cfg.secret = key;
  cfg.handshake_timeout = 1000ms;
  cfg.max_handshaking = max_handshaking;
  cfg.max_handshaking_per_source = max_handshaking_per_source;
  cfg.idle_close = idle_close;
  auto ep = endpoint::start(cfg, in.handlers());
  REQUIRE(ep);
  return std::move(*ep);
}

// An endpoint as `start` makes it, its configuration changed by `tune` first.
inline std::unique_ptr<endpoint>
start_tuned(const std::string& name, inbox& in,
            const std::function<void(endpoint_config&)>& tune) {
  endpoint_config cfg;
  cfg.name = name;
  cfg.secret = secret;
  cfg.handshake_timeout = 1000ms;
  tune(cfg);
  auto ep = endpoint::start(cfg, in.handlers());
  REQUIRE(ep);
  return std::move(*ep);
}

// An endpoint whose connections give up on bytes unacknowledged for 300 ms.
inline std::unique_ptr<endpoint> start_bounded(const std::string& name, inbox& in) {
  return start_tuned(name, in, [](endpoint_config& cfg) { cfg.unacked_timeout = 300ms; });
}

// An endpoint that closes connections idle for `idle` (both ways).
inline std::unique_ptr<endpoint> start_idle(const std::string& name, inbox& in,
                                            std::chrono::milliseconds idle) {
  return start(name, in, secret, 64, true, idle);
}

/// Sends `n` chunks of 1 MiB, the whole of one value, from `from` to `to`.
inline void send_mib_chunks(endpoint& from, const std::string& to, size_t n) {
  auto keep = std::make_shared<std::vector<uint8_t>>(n << 20, 7);
  for (size_t i = 0; i < n; ++i)
    REQUIRE(from.send(to, object_chunk{{{}, keep, keep->data() + (i << 20), 1 << 20},
                                       {1, 1},
                                       i << 20,
                                       n << 20}));
}

// A bulk frame small enough to go at once: a peer's first opens its bulk connection.
inline object_chunk tiny_chunk() {
  return object_chunk{{std::vector<uint8_t>(16, 7)}, {1, 1}, 0, 16};
}

inline int raw_connect(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
  return fd;
}

/// A hostile peer on a plain socket: it speaks frames but holds no secret.
struct raw_peer {
  int fd;
  frame_decoder decoder{64 << 20};
  std::vector<message> got;

  explicit raw_peer(int f) : fd(f) {}
  ~raw_peer() { ::close(fd); }

  void send(const message& m) {
    auto f = encode_frame(m);
    REQUIRE(::send(fd, f.data(), f.size(), MSG_NOSIGNAL) ==
            static_cast<ssize_t>(f.size()));
  }

  // The next message within `t`; nothing when the node says nothing or closed the socket.
  std::optional<message> next(std::chrono::milliseconds t = 2s) {
    auto deadline = std::chrono::steady_clock::now() + t;
    while (got.empty()) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p{fd, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) != 1)
        return {};
      uint8_t buf[4096];
      auto n = ::recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) return {};
      REQUIRE(decoder.feed(buf, static_cast<size_t>(n), got));
    }
    auto m = std::move(got.front());
    got.erase(got.begin());
    return m;
  }

  // Whether the node closed the socket within `t`.
  bool closed_by_node(std::chrono::milliseconds t = 5s) {
    auto deadline = std::chrono::steady_clock::now() + t;
    uint8_t buf[4096];
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 100) != 1) continue;
      auto n = ::recv(fd, buf, sizeof(buf), 0);
      if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
    }
    return false;
  }
};

inline hello hello_of(const std::optional<message>& m) {
  REQUIRE(m);
  REQUIRE(std::holds_alternative<hello>(*m));
  return std::get<hello>(*m);
}

inline int raw_listen(uint16_t& port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
  REQUIRE(::listen(fd, 4) == 0);
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  port = ntohs(a.sin_port);
  return fd;
}

inline size_t rss_bytes() {
  std::ifstream statm{"/proc/self/statm"};
  size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<size_t>(::sysconf(_SC_PAGESIZE));
}

inline bool logged(inbox& in, const std::string& what, std::chrono::milliseconds t = 5s) {
  return in.wait(
      [&](inbox& i) {
        for (auto& l : i.logs)
          if (l.find(what) != std::string::npos) return true;
        return false;
      },
      t);
}

} // namespace swarm::endpoint_test
