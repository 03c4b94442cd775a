// The transport's endpoint over TCP: handshakes, lanes, dialling, idle connections.

#include "tests/transport/endpoint_peers.hpp"

using namespace swarm::wire_msg;
using namespace swarm::endpoint_test;
using namespace std::chrono_literals;

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

TEST_CASE(
    "a latency-critical call already in the receiver's socket behind ordinary calls "
    "is delivered ahead of them") {
  inbox in_b;
  auto b = start("b", in_b);
  // A peer on a plain socket that proves the secret: its frames go to the socket in the
  // order written (an endpoint's own queue would already send the urgent one first).
  raw_peer a{raw_connect(b->port())};
  handshake hs{handshake::role::initiator, "a", secret,
               "127.0.0.1:" + std::to_string(b->port())};
  a.send(hs.own_hello());
  while (!hs.authenticated()) {
    auto m = a.next();
    REQUIRE(m);
    std::vector<message> reply;
    REQUIRE(hs.accept(*m, reply));
    for (auto& r : reply)
      a.send(r);
  }
  // b's reader stalls on the first message; the rest wait in its socket meanwhile.
  in_b.hold = true;
  a.send(heartbeat{1, 0, {}, 0, {}});
  std::this_thread::sleep_for(100ms); // read alone, and its delivery stalls
  const size_t calls = 32;
  for (size_t i = 1; i <= calls; ++i) {
    actor_call c;
    c.actor_id = i;
    c.method = "take";
    c.args.push_back(value{"bytes", std::vector<uint8_t>(2048, 7)});
    a.send(c);
  }
  actor_call urgent_call;
  urgent_call.actor_id = 99;
  urgent_call.method = "ping";
  urgent_call.latency_critical = true;
  a.send(urgent_call);
  in_b.release();
  REQUIRE(in_b.wait([&](inbox& i) { return i.got.size() == calls + 2; }, 10s));
  size_t urgent_at = 0;
  std::vector<uint64_t> order;
  for (size_t i = 1; i < in_b.got.size(); ++i) {
    auto& c = std::get<actor_call>(in_b.got[i].second);
    if (c.latency_critical)
      urgent_at = i;
    else
      order.push_back(c.actor_id);
  }
  // Ahead of the calls read with it (all of them, unless the socket split them); the
  // others in the order sent. Without it, it came last (33).
  INFO("the latency-critical call came " << urgent_at << " of " << calls + 1);
  CHECK(urgent_at < calls);
  for (size_t i = 0; i < order.size(); ++i)
    CHECK(order[i] == i + 1);
}

TEST_CASE(
    "a connection quiet after a large frame gives back the buffer it grew to receive "
    "it, and receives as before") {
  inbox in_a, in_b;
  auto a = start("a", in_a);
  auto b = start_tuned("b", in_b, [](endpoint_config& cfg) { cfg.trim_after = 2000ms; });
  REQUIRE(a->connect("127.0.0.1", b->port(), 5s));
  actor_call big;
  big.actor_id = 1;
  big.method = "take";
  big.args.push_back(value{"bytes", std::vector<uint8_t>(6 << 20, 7)});
  REQUIRE(a->send("b", big));
  REQUIRE(in_b.wait([](inbox& i) { return i.got.size() == 1; }, 10s));
  // Its reader grew a buffer for all of the frame, and kept it for the next ones.
  auto held = [&] { return b->stats().read_buffer_bytes; };
  CHECK(held() >= (6u << 20));
  // Nothing received for 2 s: given back, down to the reader's own 256 KiB at most.
  for (int i = 0; i < 250 && held() > (256u << 10); ++i)
    std::this_thread::sleep_for(20ms);
  CHECK(held() <= (256u << 10));
  CHECK(b->connected("a"));
  big.actor_id = 2;
  REQUIRE(a->send("b", big));
  REQUIRE(in_b.wait([](inbox& i) { return i.got.size() == 2; }, 10s));
  auto& got = std::get<actor_call>(in_b.got[1].second);
  CHECK(got.actor_id == 2);
  CHECK(std::get<value>(got.args.at(0)).bytes == std::vector<uint8_t>(6 << 20, 7));
}

TEST_CASE("bulk frames take a connection of their own, opened by the first of them, so "
          "a heartbeat never waits for them") {
  inbox in_a, in_b;
  auto a = start("a", in_a);
  auto b = start("b", in_b);
  REQUIRE(a->connect("127.0.0.1", b->port(), 5s));
  // None until a bulk frame goes; it waits for one of its own, which it opens.
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
  send_mib_chunks(*a, "b", chunks);
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

TEST_CASE("chunks for a peer nobody dials, or whose bulk connection cannot be made, "
          "go on the first connection") {
  inbox in_a, in_b, in_c;
  auto a = start("a", in_a);
  auto b = start("b", in_b);
  // b dials a, and a knows no address for b (a client's case): no bulk connection.
  REQUIRE(b->connect("127.0.0.1", a->port(), 5s));
  for (int i = 0; i < 250 && !a->connected("b"); ++i)
    std::this_thread::sleep_for(20ms);
  REQUIRE(a->send("b", tiny_chunk()));
  REQUIRE(in_b.wait([](inbox& i) { return i.got.size() == 1; }));
  CHECK(std::holds_alternative<object_chunk>(in_b.got[0].second));
  CHECK_FALSE(a->bulk_connected("b"));
  // c is told b's address is another node's (a's): the bulk dial finds 'a' there and is
  // refused, and the chunks that waited for it go on the first connection.
  auto c = start("c", in_c);
  REQUIRE(b->connect("127.0.0.1", c->port(), 5s));
  for (int i = 0; i < 250 && !c->connected("b"); ++i)
    std::this_thread::sleep_for(20ms);
  in_c.where["b"] = {"127.0.0.1", a->port()};
  for (int i = 0; i < 3; ++i)
    REQUIRE(c->send("b", tiny_chunk()));
  CHECK(in_b.wait([](inbox& i) { return i.got.size() == 4; }));
  CHECK(logged(in_c, "is node 'a', not 'b'"));
  CHECK_FALSE(c->bulk_connected("b"));
  CHECK(in_c.down.empty());
}

TEST_CASE("a bulk reader that stalls past the unacknowledged-bytes timeout does not cut "
          "its peer: the chunks wait, then arrive") {
  inbox in_a, in_b;
  auto a = start_bounded("a", in_a);
  auto b = start_bounded("b", in_b);
  REQUIRE(a->connect("127.0.0.1", b->port(), 5s));
  REQUIRE(a->send("b", tiny_chunk()));
  REQUIRE(in_b.wait([](inbox& i) { return i.got.size() == 1; }));
  for (int i = 0; i < 250 && !(a->bulk_connected("b") && b->bulk_connected("a")); ++i)
    std::this_thread::sleep_for(20ms);
  REQUIRE(b->bulk_connected("a"));
  in_b.got.clear();
  // b's bulk reader stalls on the first chunk for 1.5 s (a destination paging in, a
  // host too busy) while 64 MiB back up behind it: a's socket sees no room that long.
  in_b.hold = true;
  in_b.hold_bulk_only = true;
  const size_t chunks = 64;
  send_mib_chunks(*a, "b", chunks);
  std::this_thread::sleep_for(1500ms);
  // The first connections still carry heartbeats both ways: neither side is down.
  REQUIRE(a->send("b", heartbeat{1, 0, {}, 0, {}}));
  in_b.release();
  CHECK(in_b.wait([&](inbox& i) { return i.got.size() == chunks + 1; }, 20s));
  CHECK(in_a.down.empty());
  CHECK(in_b.down.empty());
  CHECK(a->bulk_connected("b"));
}

TEST_CASE("chunks sent while the bulk connection is dialled wait for it: a peer whose "
          "reader stalls past the unacknowledged-bytes timeout is not cut off") {
  inbox in_a, in_b;
  auto a = start_bounded("a", in_a);
  auto b = start_bounded("b", in_b);
  REQUIRE(a->connect("127.0.0.1", b->port(), 5s));
  // b's reader stalls on the first message (its bulk connection's handshake with it)
  // for 1.5 s while 64 MiB of chunks are sent: on the first connection they would
  // leave a's socket without room that long.
  in_b.hold = true;
  REQUIRE(a->send("b", heartbeat{1, 0, {}, 0, {}}));
  const size_t chunks = 64;
  send_mib_chunks(*a, "b", chunks);
  std::this_thread::sleep_for(1500ms);
  in_b.release();
  CHECK(in_b.wait([&](inbox& i) { return i.got.size() == chunks + 1; }, 20s));
  CHECK(in_a.down.empty());
  CHECK(in_b.down.empty());
  CHECK(a->connected("b"));
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
  // Usually one report holds all three; a dial that fails before the next send (a slow
  // sender thread) reports what it held, and the next send dials again.
  auto reported = [](inbox& in) {
    size_t n = 0;
    for (auto& [peer, held] : in.undelivered)
      n += held.size();
    return n;
  };
  REQUIRE(in_a.wait([&](inbox& i) { return reported(i) == 3; }));
  uint64_t next = 0;
  for (size_t r = 0; r < in_a.undelivered.size(); ++r) {
    CHECK(in_a.undelivered[r].first == "b");
    for (auto& m : in_a.undelivered[r].second)
      CHECK(std::get<heartbeat>(m).sent_ns == next++);
    auto& why = in_a.undelivered_why[r];
    CHECK((why.find("Connection refused") != std::string::npos ||
           why.find("is node 'c', not 'b'") != std::string::npos));
  }
  CHECK(a->stats().undelivered == 3);
  CHECK_FALSE(a->connected("b"));
  CHECK(in_c.got.empty());
  // A peer whose address nobody knows is an error at once.
  auto unknown = a->send("x", heartbeat{1, 0, {}, 0, {}});
  REQUIRE_FALSE(unknown);
  CHECK(unknown.err().code == swarm::errc::node_unreachable);
}
