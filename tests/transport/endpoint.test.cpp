#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "transport/endpoint.hpp"
#include "transport/wire_codec.hpp"

using namespace swarm::wire_msg;
using namespace std::chrono_literals;

namespace {

const std::string secret = "a-cluster-secret-of-some-length";

/// What one endpoint received, for tests to wait on (bounded).
struct inbox {
  std::mutex mtx;
  std::condition_variable cv;
  std::vector<std::pair<std::string, message>> got;
  std::vector<std::string> down;
  std::vector<std::string> logs;
  bool hold =
      false; // a slow receiver: the first message stalls its reader until released

  void release() {
    std::lock_guard<std::mutex> g{mtx};
    hold = false;
    cv.notify_all();
  }

  endpoint_handlers handlers() {
    endpoint_handlers h;
    h.on_message = [this](const std::string& peer, message&& m) {
      std::unique_lock<std::mutex> g{mtx};
      cv.wait_for(g, 10s, [this] { return !hold; });
      got.emplace_back(peer, std::move(m));
      cv.notify_all();
    };
    h.on_peer_down = [this](const std::string& peer, const std::string&) {
      std::lock_guard<std::mutex> g{mtx};
      down.push_back(peer);
      cv.notify_all();
    };
    h.log = [this](const std::string& line) {
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

std::unique_ptr<endpoint> start(const std::string& name, inbox& in,
                                const std::string& key = secret) {
  endpoint_config cfg;
  cfg.name = name;
  cfg.secret = key;
  cfg.handshake_timeout = 1000ms;
  auto ep = endpoint::start(cfg, in.handlers());
  REQUIRE(ep);
  return std::move(*ep);
}

int raw_connect(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
  return fd;
}

} // namespace

TEST_CASE("two endpoints authenticate over TCP and exchange messages both ways") {
  inbox in_a, in_b;
  auto a = start("a", in_a);
  auto b = start("b", in_b);
  auto peer = a->connect("127.0.0.1", b->port(), 5s);
  REQUIRE(peer);
  CHECK(*peer == "b");
  REQUIRE(a->send("b", heartbeat{42, 0.5, {}, 0}));
  REQUIRE(in_b.wait([](inbox& i) { return !i.got.empty(); }));
  CHECK(in_b.got[0].first == "a");
  CHECK(std::get<heartbeat>(in_b.got[0].second).sent_ns == 42);
  // b answers over the connection a opened.
  REQUIRE(b->send("a", heartbeat{7, 0, {}, 0}));
  REQUIRE(in_a.wait([](inbox& i) { return !i.got.empty(); }));
  CHECK(std::get<heartbeat>(in_a.got[0].second).sent_ns == 7);
}

TEST_CASE("a peer without the cluster secret is refused before any message arrives") {
  inbox in_a, in_b;
  auto a = start("intruder", in_a, "not-the-cluster-secret-at-all");
  auto b = start("b", in_b);
  auto peer = a->connect("127.0.0.1", b->port(), 5s);
  REQUIRE_FALSE(peer);
  CHECK(peer.err().message.find("secret") != std::string::npos);
  CHECK_FALSE(b->connected("intruder"));
  CHECK(a->send("b", heartbeat{1, 0, {}, 0}).err().code == swarm::errc::node_unreachable);
  CHECK(in_b.wait([](inbox& i) { return !i.logs.empty(); }));
  CHECK(in_b.got.empty());
  CHECK(b->stats().refused >= 1);
}

TEST_CASE("garbage bytes close only that connection and the node keeps serving") {
  inbox in_a, in_b;
  auto a = start("a", in_a);
  auto b = start("b", in_b);
  REQUIRE(a->connect("127.0.0.1", b->port(), 5s));
  int fd = raw_connect(b->port());
  std::vector<uint8_t> junk(64, 0xff);
  REQUIRE(::write(fd, junk.data(), junk.size()) == static_cast<ssize_t>(junk.size()));
  REQUIRE(in_b.wait([](inbox& i) {
    for (auto& l : i.logs)
      if (l.find("bad frame") != std::string::npos) return true;
    return false;
  }));
  // The socket was closed by b: reading ends (after b's hello) with EOF.
  std::vector<uint8_t> buf(4096);
  ssize_t n = 1;
  for (int i = 0; i < 100 && n > 0; ++i)
    n = ::read(fd, buf.data(), buf.size());
  CHECK(n == 0);
  ::close(fd);
  REQUIRE(a->send("b", heartbeat{9, 0, {}, 0}));
  REQUIRE(in_b.wait([](inbox& i) { return !i.got.empty(); }));
  CHECK(in_b.got[0].first == "a");
}

TEST_CASE("a connection that never completes the handshake is closed after its timeout") {
  inbox in_b;
  auto b = start("b", in_b);
  int fd = raw_connect(b->port());
  REQUIRE(in_b.wait(
      [](inbox& i) {
        for (auto& l : i.logs)
          if (l.find("no handshake") != std::string::npos) return true;
        return false;
      },
      5s));
  ::close(fd);
}

TEST_CASE("control messages overtake queued bulk frames on the same connection") {
  inbox in_a, in_b;
  auto a = start("a", in_a);
  auto b = start("b", in_b);
  REQUIRE(a->connect("127.0.0.1", b->port(), 5s));
  // b reads slowly, so bulk frames back up at a; then one heartbeat.
  in_b.hold = true;
  const size_t chunks = 32;
  for (size_t i = 0; i < chunks; ++i)
    REQUIRE(a->send("b", object_chunk{{1, 1},
                                      i << 20,
                                      chunks << 20,
                                      std::vector<uint8_t>(1 << 20, 7),
                                      {},
                                      nullptr,
                                      0}));
  REQUIRE(a->send("b", heartbeat{99, 0, {}, 0}));
  in_b.release();
  REQUIRE(in_b.wait([&](inbox& i) { return i.got.size() == chunks + 1; }, 20s));
  size_t heartbeat_at = 0;
  for (size_t i = 0; i < in_b.got.size(); ++i)
    if (std::holds_alternative<heartbeat>(in_b.got[i].second)) heartbeat_at = i;
  CHECK(heartbeat_at < chunks);
}

TEST_CASE("a closed peer is reported down and sends to it fail with node_unreachable") {
  inbox in_a, in_b;
  auto a = start("a", in_a);
  auto b = start("b", in_b);
  REQUIRE(a->connect("127.0.0.1", b->port(), 5s));
  b.reset();
  REQUIRE(in_a.wait([](inbox& i) { return !i.down.empty(); }));
  CHECK(in_a.down[0] == "b");
  CHECK(a->send("b", heartbeat{1, 0, {}, 0}).err().code == swarm::errc::node_unreachable);
  inbox in_c;
  auto c = start("c", in_c);
  CHECK_FALSE(c->connect("127.0.0.1", 1, 2s));
}
