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
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "transport/endpoint.hpp"
#include "transport/handshake.hpp"
#include "transport/traffic_class.hpp"
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

std::unique_ptr<endpoint> start(const std::string& name, inbox& in,
                                const std::string& key = secret,
                                size_t max_handshaking = 64,
                                bool bulk_connection = true,
                                std::chrono::milliseconds idle_close = 0ms) {
  endpoint_config cfg;
  cfg.bulk_connection = bulk_connection;
  cfg.name = name;
  cfg.secret = key;
  cfg.handshake_timeout = 1000ms;
  cfg.max_handshaking = max_handshaking;
  cfg.idle_close = idle_close;
  auto ep = endpoint::start(cfg, in.handlers());
  REQUIRE(ep);
  return std::move(*ep);
}

// An endpoint that closes connections idle for `idle` (both ways).
std::unique_ptr<endpoint> start_idle(const std::string& name, inbox& in,
                                     std::chrono::milliseconds idle) {
  return start(name, in, secret, 64, true, idle);
}

// A bulk frame small enough to go at once: a peer's first opens its bulk connection.
object_chunk tiny_chunk() {
  return object_chunk{{std::vector<uint8_t>(16, 7)}, {1, 1}, 0, 16};
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

hello hello_of(const std::optional<message>& m) {
  REQUIRE(m);
  REQUIRE(std::holds_alternative<hello>(*m));
  return std::get<hello>(*m);
}

int raw_listen(uint16_t& port) {
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

size_t rss_bytes() {
  std::ifstream statm{"/proc/self/statm"};
  size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<size_t>(::sysconf(_SC_PAGESIZE));
}

bool logged(inbox& in, const std::string& what, std::chrono::milliseconds t = 5s) {
  return in.wait(
      [&](inbox& i) {
        for (auto& l : i.logs)
          if (l.find(what) != std::string::npos) return true;
        return false;
      },
      t);
}

} // namespace

TEST_CASE("two endpoints authenticate over TCP and exchange messages both ways") {
  inbox in_a, in_b;
  auto a = start("a", in_a);
  auto b = start("b", in_b);
  auto peer = a->connect("127.0.0.1", b->port(), 5s);
  REQUIRE(peer);
  CHECK(*peer == "b");
  REQUIRE(a->send("b", heartbeat{42, 0.5, {}, 0, {}}));
  REQUIRE(in_b.wait([](inbox& i) { return !i.got.empty(); }));
  CHECK(in_b.got[0].first == "a");
  CHECK(std::get<heartbeat>(in_b.got[0].second).sent_ns == 42);
  // b answers over the connection a opened.
  REQUIRE(b->send("a", heartbeat{7, 0, {}, 0, {}}));
  REQUIRE(in_a.wait([](inbox& i) { return !i.got.empty(); }));
  CHECK(std::get<heartbeat>(in_a.got[0].second).sent_ns == 7);
}

namespace {

// The DSCP mark and priority of each of this process's TCP sockets connected to `port`.
std::multiset<std::pair<int, int>> marks_towards(uint16_t port) {
  std::multiset<std::pair<int, int>> out;
  for (auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    int fd = std::atoi(entry.path().filename().c_str());
    sockaddr_in peer{};
    socklen_t len = sizeof(peer);
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0 ||
        peer.sin_family != AF_INET || ntohs(peer.sin_port) != port)
      continue;
    int tos = 0, priority = 0;
    socklen_t n = sizeof(int);
    ::getsockopt(fd, IPPROTO_IP, IP_TOS, &tos, &n);
    n = sizeof(int);
    ::getsockopt(fd, SOL_SOCKET, SO_PRIORITY, &priority, &n);
    out.emplace(tos >> 2, priority);
  }
  return out;
}

} // namespace

TEST_CASE("a node's connections carry their class's DSCP mark and priority: control "
          "above bulk") {
  inbox in_a, in_b;
  auto a = start("a", in_a);
  auto b = start("b", in_b);
  REQUIRE(a->connect("127.0.0.1", b->port(), 5s));
  REQUIRE(a->send("b", heartbeat{1, 0, {}, 0, {}}));
  REQUIRE(a->send("b", tiny_chunk()));
  // The dialling side's control and bulk connections, each marked once proven.
  const std::multiset<std::pair<int, int>> both{
      {swarm::dscp_of(swarm::traffic_class::control), 6},
      {swarm::dscp_of(swarm::traffic_class::bulk), 2}};
  auto until = std::chrono::steady_clock::now() + 5s;
  while (marks_towards(b->port()) != both && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(1ms);
  CHECK(marks_towards(b->port()) == both);
  CHECK(swarm::dscp_of(swarm::traffic_class::control) == 34); // AF41
  CHECK(swarm::dscp_of(swarm::traffic_class::bulk) == 10);    // AF11
}

TEST_CASE("a peer without the cluster secret is refused before any message arrives") {
  inbox in_a, in_b;
  auto a = start("intruder", in_a, "not-the-cluster-secret-at-all");
  auto b = start("b", in_b);
  auto peer = a->connect("127.0.0.1", b->port(), 5s);
  REQUIRE_FALSE(peer);
  CHECK(peer.err().message.find("secret") != std::string::npos);
  CHECK_FALSE(b->connected("intruder"));
  CHECK(a->send("b", heartbeat{1, 0, {}, 0, {}}).err().code ==
        swarm::errc::node_unreachable);
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
  REQUIRE(a->send("b", heartbeat{9, 0, {}, 0, {}}));
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
  auto a = start("a", in_a, secret, 64, false);
  auto b = start("b", in_b);
  REQUIRE(a->connect("127.0.0.1", b->port(), 5s));
  // b reads slowly, so bulk frames back up at a; then one heartbeat.
  in_b.hold = true;
  const size_t chunks = 32;
  for (size_t i = 0; i < chunks; ++i)
    REQUIRE(a->send(
        "b",
        object_chunk{{std::vector<uint8_t>(1 << 20, 7)}, {1, 1}, i << 20, chunks << 20}));
  REQUIRE(a->send("b", heartbeat{99, 0, {}, 0, {}}));
  in_b.release();
  REQUIRE(in_b.wait([&](inbox& i) { return i.got.size() == chunks + 1; }, 20s));
  size_t heartbeat_at = 0;
  for (size_t i = 0; i < in_b.got.size(); ++i)
    if (std::holds_alternative<heartbeat>(in_b.got[i].second)) heartbeat_at = i;
  CHECK(heartbeat_at < chunks);
}

TEST_CASE("bulk frames take a connection of their own, opened by the first of them, so "
          "a heartbeat never waits for them") {
  inbox in_a, in_b;
  auto a = start("a", in_a);
  auto b = start("b", in_b);
  REQUIRE(a->connect("127.0.0.1", b->port(), 5s));
  // None until a bulk frame goes; it shares the first connection until one is up.
  REQUIRE(a->send("b", heartbeat{1, 0, {}, 0, {}}));
  REQUIRE(in_b.wait([](inbox& i) { return !i.got.empty(); }));
  CHECK_FALSE(a->bulk_connected("b"));
  CHECK(a->stats().connections == 1);
  REQUIRE(a->send("b", tiny_chunk()));
  REQUIRE(in_b.wait([](inbox& i) { return i.got.size() == 2; }));
  in_b.got.clear();
  for (int i = 0; i < 250 && !(a->bulk_connected("b") && b->bulk_connected("a")); ++i)
    std::this_thread::sleep_for(20ms);
  REQUIRE(a->bulk_connected("b"));
  REQUIRE(b->bulk_connected("a"));
  // b's bulk reader stalls on the first chunk while 32 MiB of chunks back up behind it.
  in_b.hold = true;
  in_b.hold_bulk_only = true;
  const size_t chunks = 32;
  std::vector<uint8_t> value(chunks << 20, 7);
  auto keep = std::make_shared<std::vector<uint8_t>>(std::move(value));
  for (size_t i = 0; i < chunks; ++i) {
    object_chunk c{
        {{}, keep, keep->data() + (i << 20), 1 << 20}, {1, 1}, i << 20, chunks << 20};
    REQUIRE(a->send("b", c));
  }
  REQUIRE(a->send("b", heartbeat{99, 0, {}, 0, {}}));
  CHECK(in_b.wait([](inbox& i) {
    for (auto& [peer, m] : i.got)
      if (std::holds_alternative<heartbeat>(m)) return true;
    return false;
  }));
  in_b.release();
  REQUIRE(in_b.wait([&](inbox& i) { return i.got.size() == chunks + 1; }, 20s));
  // Every chunk arrived whole, read where it landed.
  for (auto& [peer, m] : in_b.got)
    if (auto* c = std::get_if<object_chunk>(&m)) {
      REQUIRE(c->size() == (1u << 20));
      CHECK(c->bytes()[0] == 7);
      CHECK(c->bytes()[c->size() - 1] == 7);
    }
}

TEST_CASE("a closed peer is reported down and sends to it fail with node_unreachable") {
  inbox in_a, in_b;
  auto a = start("a", in_a);
  auto b = start("b", in_b);
  REQUIRE(a->connect("127.0.0.1", b->port(), 5s));
  b.reset();
  REQUIRE(in_a.wait([](inbox& i) { return !i.down.empty(); }));
  CHECK(in_a.down[0] == "b");
  CHECK(a->send("b", heartbeat{1, 0, {}, 0, {}}).err().code ==
        swarm::errc::node_unreachable);
  inbox in_c;
  auto c = start("c", in_c);
  CHECK_FALSE(c->connect("127.0.0.1", 1, 2s));
}

TEST_CASE("messages to a peer not yet connected dial it and arrive in the order each "
          "sender sent them") {
  inbox in_a, in_b;
  auto a = start("a", in_a);
  auto b = start("b", in_b);
  in_a.where["b"] = {"127.0.0.1", b->port()};
  CHECK_FALSE(a->connected("b"));
  // Four threads send at once while the dial is in flight, and after it is up.
  constexpr uint64_t each = 200;
  std::vector<std::thread> senders;
  for (uint64_t t = 0; t < 4; ++t)
    senders.emplace_back([&, t] {
      for (uint64_t i = 0; i < each; ++i)
        CHECK(a->send("b", heartbeat{t * 1000 + i, 0, {}, 0, {}}));
    });
  for (auto& t : senders)
    t.join();
  REQUIRE(in_b.wait([&](inbox& i) { return i.got.size() == 4 * each; }));
  std::map<uint64_t, uint64_t> next; // by sender
  for (auto& [from, m] : in_b.got) {
    CHECK(from == "a");
    auto n = std::get<heartbeat>(m).sent_ns;
    CHECK(n % 1000 == next[n / 1000]++);
  }
  CHECK(a->connected("b"));
  // One connection, however many sends found none (and no bulk one: nothing bulk went).
  CHECK(a->stats().connections == 1);
  CHECK(a->stats().dials == 1);
  CHECK(in_a.undelivered.empty());
  // b answers over the connection a opened, without an address for a.
  REQUIRE(b->send("a", heartbeat{7, 0, {}, 0, {}}));
  REQUIRE(in_a.wait([](inbox& i) { return !i.got.empty(); }));
}

TEST_CASE("one node serves sixty peers that dial it at once, each exchange arriving, "
          "and keeps serving as half of them leave") {
  inbox in_hub;
  auto hub = start("hub", in_hub);
  constexpr size_t peers = 60;
  std::vector<std::unique_ptr<inbox>> ins;
  std::vector<std::unique_ptr<endpoint>> eps;
  for (size_t i = 0; i < peers; ++i) {
    ins.push_back(std::make_unique<inbox>());
    ins.back()->where["hub"] = {"127.0.0.1", hub->port()};
    eps.push_back(start("p" + std::to_string(i), *ins.back()));
  }
  // Every peer sends at once: each send dials.
  for (size_t i = 0; i < peers; ++i)
    REQUIRE(eps[i]->send("hub", heartbeat{i, 0, {}, 0, {}}));
  REQUIRE(in_hub.wait([&](inbox& i) { return i.got.size() == peers; }, 10s));
  // The hub answers each over the connection the peer opened.
  for (size_t i = 0; i < peers; ++i)
    REQUIRE(hub->send("p" + std::to_string(i), heartbeat{1000 + i, 0, {}, 0, {}}));
  for (size_t i = 0; i < peers; ++i) {
    REQUIRE(ins[i]->wait([](inbox& in) { return !in.got.empty(); }));
    CHECK(std::get<heartbeat>(ins[i]->got[0].second).sent_ns == 1000 + i);
  }
  // Half leave (their sockets close, their numbers free for others); the rest go on.
  for (size_t i = 0; i < peers; i += 2)
    eps[i].reset();
  REQUIRE(in_hub.wait([&](inbox& i) { return i.down.size() == peers / 2; }, 10s));
  inbox in_late;
  in_late.where["hub"] = {"127.0.0.1", hub->port()};
  auto late = start("late", in_late);
  REQUIRE(late->send("hub", heartbeat{7, 0, {}, 0, {}}));
  for (size_t i = 1; i < peers; i += 2)
    REQUIRE(eps[i]->send("hub", heartbeat{2000 + i, 0, {}, 0, {}}));
  REQUIRE(
      in_hub.wait([&](inbox& i) { return i.got.size() == peers + 1 + peers / 2; }, 10s));
  CHECK(hub->stats().peers == peers / 2 + 1);
}

TEST_CASE("connections idle both ways close at both ends without a down report, and the "
          "next message dials again") {
  inbox in_a, in_b;
  auto a = start_idle("a", in_a, 300ms);
  auto b = start_idle("b", in_b, 300ms);
  in_a.where["b"] = {"127.0.0.1", b->port()};
  REQUIRE(a->send("b", heartbeat{1, 0, {}, 0, {}}));
  REQUIRE(a->send("b", tiny_chunk()));
  REQUIRE(in_b.wait([](inbox& i) { return i.got.size() == 2; }));
  REQUIRE(b->send("a", heartbeat{2, 0, {}, 0, {}}));
  REQUIRE(in_a.wait([](inbox& i) { return i.got.size() == 1; }));
  // Bounded: idle for 300 ms, checked every 75 ms, then a goodbye and both ends closing.
  auto closed = [&] {
    return !a->connected("b") && !b->connected("a") && a->stats().connections == 0 &&
           b->stats().connections == 0;
  };
  for (int i = 0; i < 250 && !closed(); ++i)
    std::this_thread::sleep_for(20ms);
  REQUIRE(closed());
  CHECK(a->stats().idle_closed >= 1);
  CHECK(b->stats().idle_closed >= 1);
  CHECK(in_a.down.empty());
  CHECK(in_b.down.empty());
  // b cannot dial a (it knows no address): a client's case. a dials b again.
  CHECK_FALSE(b->send("a", heartbeat{9, 0, {}, 0, {}}));
  REQUIRE(a->send("b", heartbeat{3, 0, {}, 0, {}}));
  REQUIRE(in_b.wait([](inbox& i) { return i.got.size() == 3; }));
  CHECK(std::get<heartbeat>(in_b.got[2].second).sent_ns == 3);
  CHECK(a->stats().dials == 2);
}

TEST_CASE("under traffic with pauses, connections closing as idle and opening again lose "
          "nothing and keep each sender's order") {
  inbox in_a, in_b;
  auto a = start_idle("a", in_a, 100ms);
  auto b = start_idle("b", in_b, 100ms);
  in_a.where["b"] = {"127.0.0.1", b->port()};
  in_b.where["a"] = {"127.0.0.1", a->port()};
  constexpr uint64_t bursts = 8, each = 40;
  // Two senders on a, one on b; bursts apart by more than the idle time, or not.
  auto sender = [&](endpoint& from, const std::string& to, uint64_t id) {
    return std::thread{[&from, to, id] {
      for (uint64_t burst = 0; burst < bursts; ++burst) {
        for (uint64_t i = 0; i < each; ++i)
          CHECK(from.send(to, heartbeat{id * 100000 + burst * each + i, 0, {}, 0, {}}));
        std::this_thread::sleep_for(burst % 2 ? 10ms : 280ms);
      }
    }};
  };
  std::vector<std::thread> senders;
  senders.push_back(sender(*a, "b", 1));
  senders.push_back(sender(*a, "b", 2));
  senders.push_back(sender(*b, "a", 3));
  for (auto& t : senders)
    t.join();
  REQUIRE(in_b.wait([&](inbox& i) { return i.got.size() == 2 * bursts * each; }, 10s));
  REQUIRE(in_a.wait([&](inbox& i) { return i.got.size() == bursts * each; }, 10s));
  for (auto* in : {&in_a, &in_b}) {
    std::map<uint64_t, uint64_t> next; // by sender
    for (auto& [from, m] : in->got) {
      auto n = std::get<heartbeat>(m).sent_ns;
      CHECK(n % 100000 == next[n / 100000]++);
    }
    CHECK(in->down.empty());
  }
  CHECK(a->stats().idle_closed + b->stats().idle_closed >= 2);
  CHECK(a->stats().undelivered + b->stats().undelivered == 0);
}

TEST_CASE("what was sent to a peer that cannot be dialled is reported undelivered, in "
          "order, saying why") {
  inbox in_a, in_c;
  auto a = start("a", in_a);
  auto c = start("c", in_c);
  SUBCASE("nothing listens at its address") {
    uint16_t port = 0;
    ::close(raw_listen(port));
    in_a.where["b"] = {"127.0.0.1", port};
  }
  SUBCASE("another node listens there") {
    in_a.where["b"] = {"127.0.0.1", c->port()};
  }
  for (uint64_t i = 0; i < 3; ++i)
    REQUIRE(a->send("b", heartbeat{i, 0, {}, 0, {}}));
  REQUIRE(in_a.wait([](inbox& i) { return !i.undelivered.empty(); }));
  REQUIRE(in_a.undelivered.size() == 1);
  CHECK(in_a.undelivered[0].first == "b");
  REQUIRE(in_a.undelivered[0].second.size() == 3);
  for (uint64_t i = 0; i < 3; ++i)
    CHECK(std::get<heartbeat>(in_a.undelivered[0].second[i]).sent_ns == i);
  auto& why = in_a.undelivered_why[0];
  CHECK((why.find("Connection refused") != std::string::npos ||
         why.find("is node 'c', not 'b'") != std::string::npos));
  CHECK_FALSE(a->connected("b"));
  CHECK(in_c.got.empty());
  // A peer whose address nobody knows is an error at once.
  auto unknown = a->send("x", heartbeat{1, 0, {}, 0, {}});
  REQUIRE_FALSE(unknown);
  CHECK(unknown.err().code == swarm::errc::node_unreachable);
}

TEST_CASE("a node's proof cannot be reflected back to it over TCP") {
  inbox in_head;
  auto head = start("head", in_head);
  // Two connections to the head: the head's hello on the first gives the nonce that
  // the second's hello echoes, asking the head to sign over its own nonce. It signs
  // nothing before the peer proved the secret, and a made-up proof closes the socket.
  raw_peer first{raw_connect(head->port())}, second{raw_connect(head->port())};
  auto nonce_one = hello_of(first.next()).nonce;
  (void)hello_of(second.next());
  second.send(hello{"worker-1", nonce_one, protocol_version});
  CHECK_FALSE(second.next(300ms));
  second.send(proof{std::vector<uint8_t>(32, 1)});
  CHECK(second.closed_by_node());
  // Claiming the head's own name on the first is refused outright.
  first.send(hello{"head", std::vector<uint8_t>(32, 2), protocol_version});
  CHECK(first.closed_by_node());
  CHECK(logged(in_head, "own name 'head'"));
  CHECK_FALSE(head->connected("worker-1"));
  CHECK_FALSE(head->connected("head"));
  CHECK(in_head.got.empty());
  CHECK(in_head.down.empty());
}

TEST_CASE(
    "a worker's proof relayed by a man in the middle does not open the head over TCP") {
  inbox in_head, in_worker;
  auto head = start("head", in_head);
  auto worker = start("worker-1", in_worker);
  uint16_t trap_port = 0;
  int trap = raw_listen(trap_port);
  // The worker dials the attacker, believing it is the head.
  std::thread dial{[&] { (void)worker->connect("127.0.0.1", trap_port, 3s); }};
  raw_peer to_worker{::accept(trap, nullptr, nullptr)};
  auto worker_hello = hello_of(to_worker.next());
  raw_peer to_head{raw_connect(head->port())};
  to_head.send(worker_hello);
  auto head_hello = hello_of(to_head.next());
  to_worker.send(head_hello);
  auto worker_proof = to_worker.next();
  REQUIRE(worker_proof);
  REQUIRE(std::holds_alternative<proof>(*worker_proof));
  to_head.send(*worker_proof);
  // The proof names the address the worker dialled, not the head's: refused, and what the
  // attacker sends next never reaches the head.
  to_head.send(stop_request{});
  CHECK(to_head.closed_by_node());
  CHECK(logged(in_head, "'worker-1' does not hold the cluster secret"));
  CHECK_FALSE(head->connected("worker-1"));
  CHECK(in_head.got.empty());
  dial.join();
  ::close(trap);
}

TEST_CASE(
    "a second connection under a connected name neither replaces nor downs the first") {
  inbox in_a, in_b, in_twin;
  auto a = start("a", in_a);
  auto b = start("b", in_b);
  REQUIRE(a->connect("127.0.0.1", b->port(), 5s));
  {
    auto twin = start("a", in_twin);
    REQUIRE(twin->connect("127.0.0.1", b->port(), 5s));
    CHECK(logged(in_b, "kept as a spare"));
  }
  CHECK(logged(in_b, "closed a spare connection with node 'a'"));
  CHECK(in_b.down.empty());
  CHECK(b->connected("a"));
  REQUIRE(b->send("a", heartbeat{5, 0, {}, 0, {}}));
  REQUIRE(in_a.wait([](inbox& i) { return !i.got.empty(); }));
  CHECK(std::get<heartbeat>(in_a.got[0].second).sent_ns == 5);
  CHECK(in_twin.got.empty());
}

TEST_CASE("large frame headers from unproven peers are refused and hold no memory") {
  inbox in_a, in_b;
  auto a = start("a", in_a);
  auto b = start("b", in_b);
  REQUIRE(a->connect("127.0.0.1", b->port(), 5s));
  auto before = rss_bytes();
  // Each claims a frame just under the 64 MiB limit for proven peers and sends 1 MiB of
  // it.
  std::vector<std::unique_ptr<raw_peer>> flood;
  std::vector<uint8_t> body(1 << 20, 0);
  uint32_t claim = (60u << 20);
  for (int i = 0; i < 4; ++i)
    body[static_cast<size_t>(i)] = static_cast<uint8_t>(claim >> (8 * i));
  for (int i = 0; i < 32; ++i) {
    flood.push_back(std::make_unique<raw_peer>(raw_connect(b->port())));
    (void)::send(flood.back()->fd, body.data(), body.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  for (auto& p : flood)
    CHECK(p->closed_by_node());
  CHECK(logged(in_b, "exceeds the limit of 4096"));
  CHECK(rss_bytes() < before + (64u << 20));
  // Proven traffic kept flowing.
  REQUIRE(a->send("b", heartbeat{3, 0, {}, 0, {}}));
  REQUIRE(in_b.wait([](inbox& i) { return !i.got.empty(); }));
  CHECK(std::get<heartbeat>(in_b.got[0].second).sent_ns == 3);
}

TEST_CASE("silent connections past the handshaking cap make room for new ones and are "
          "closed sooner under pressure, and proven peers go on") {
  inbox in_a, in_b;
  auto a = start("a", in_a);
  auto b = start("b", in_b, secret, 8);
  REQUIRE(a->connect("127.0.0.1", b->port(), 5s));
  std::vector<std::unique_ptr<raw_peer>> silent;
  for (int i = 0; i < 40; ++i)
    silent.push_back(std::make_unique<raw_peer>(raw_connect(b->port())));
  // Closed to make room, or sooner for the pressure (one line a second says either).
  CHECK(logged(in_b, "connections were handshaking"));
  // A peer holding the secret gets in while they hold the slots.
  inbox in_c;
  auto c = start("c", in_c);
  CHECK(c->connect("127.0.0.1", b->port(), 5s));
  REQUIRE(a->send("b", heartbeat{4, 0, {}, 0, {}}));
  REQUIRE(in_b.wait([](inbox& i) { return !i.got.empty(); }));
  size_t closed = 0;
  for (auto& p : silent)
    if (p->closed_by_node(2s)) ++closed;
  CHECK(closed == silent.size());
  CHECK(a->connected("b"));
  CHECK(c->connected("b"));
}

TEST_CASE("a flood of idle connections, reopened as they close, does not lock out peers "
          "that hold the secret") {
  inbox in_b;
  auto b = start("b", in_b, secret, 8);
  // The attack (slowloris): 40 connections that send nothing, each reopened at once when
  // the node closes it, for as long as the peers below connect.
  std::atomic<bool> stop{false};
  std::atomic<size_t> reopened{0};
  std::thread attacker{[&] {
    std::vector<int> fds;
    for (int i = 0; i < 40; ++i)
      fds.push_back(raw_connect(b->port()));
    while (!stop) {
      for (auto& fd : fds) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 0) != 1) continue;
        uint8_t buf[512];
        if (::recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0) continue; // its hello
        ::close(fd);
        fd = raw_connect(b->port());
        ++reopened;
      }
      std::this_thread::sleep_for(1ms);
    }
    for (auto fd : fds)
      ::close(fd);
  }};
  size_t connected = 0;
  for (int i = 0; i < 8; ++i) {
    inbox in_c;
    auto c = start("c" + std::to_string(i), in_c);
    auto r = c->connect("127.0.0.1", b->port(), 5s);
    if (r)
      ++connected;
    else
      MESSAGE("connect " << i << ": " << r.err().message);
  }
  stop = true;
  attacker.join();
  CHECK(reopened > 0); // the attack ran: the node kept closing idle connections
  CHECK(connected == 8);
}
