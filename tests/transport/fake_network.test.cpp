#include <doctest/doctest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "transport/fake_network.hpp"

using namespace swarm::wire_msg;

namespace {

const std::string secret = "0123456789abcdef-cluster";

struct recorder {
  std::vector<std::pair<std::string, message>> seen;
  fake_network::handler handler() {
    return
        [this](const std::string& from, const message& m) { seen.emplace_back(from, m); };
  }
};

} // namespace

TEST_CASE(
    "nodes holding the secret connect over the fake network and exchange messages") {
  fake_network net;
  recorder a, b;
  net.add_node("a", secret, a.handler());
  net.add_node("b", secret, b.handler());
  REQUIRE(net.connect("a", "b"));
  CHECK(net.connected("a", "b"));
  CHECK(net.connected("b", "a"));
  REQUIRE(net.send("a", "b", heartbeat{1, 0.5, {}, 0, {}}));
  REQUIRE(net.send("b", "a", task_result{{1, 1}, value{"int", {1}}}));
  CHECK(b.seen.empty()); // nothing moves until the test says so
  CHECK(net.deliver() == 2);
  REQUIRE(b.seen.size() == 1);
  CHECK(b.seen[0].first == "a");
  CHECK(std::get<heartbeat>(b.seen[0].second).load == 0.5);
  CHECK(a.seen.size() == 1);
}

TEST_CASE("a node without the secret is refused and cannot send anything") {
  fake_network net;
  recorder a, m;
  net.add_node("a", secret, a.handler());
  net.add_node("mallory", "some-other-secret-entirely", m.handler());
  auto r = net.connect("mallory", "a");
  REQUIRE_FALSE(r);
  CHECK(r.err().message.find("does not hold the cluster secret") != std::string::npos);
  CHECK(net.stats().refused == 1);
  CHECK_FALSE(net.send("mallory", "a", task_submit{}));
  net.deliver();
  CHECK(a.seen.empty());
}

TEST_CASE("control and call frames overtake bulk frames queued before them") {
  fake_network net;
  recorder a, b;
  net.add_node("a", secret, a.handler());
  net.add_node("b", secret, b.handler());
  REQUIRE(net.connect("a", "b"));
  for (uint64_t i = 0; i < 3; ++i)
    REQUIRE(
        net.send("a", "b", object_chunk{{std::vector<uint8_t>(10)}, {1, 1}, i * 10, 30}));
  REQUIRE(net.send("a", "b", task_submit{}));
  REQUIRE(net.send("a", "b", heartbeat{}));
  net.deliver();
  REQUIRE(b.seen.size() == 5);
  CHECK(std::holds_alternative<heartbeat>(b.seen[0].second));
  CHECK(std::holds_alternative<task_submit>(b.seen[1].second));
  CHECK(std::get<object_chunk>(b.seen[2].second).offset == 0);
  CHECK(std::get<object_chunk>(b.seen[4].second).offset == 20);
  CHECK(net.stats().frames[static_cast<size_t>(lane::bulk)] == 3);
  CHECK(net.stats().bytes[static_cast<size_t>(lane::bulk)] > 30);
}

TEST_CASE("garbage bytes close that connection while the others keep working") {
  fake_network net;
  recorder a, b, c;
  net.add_node("a", secret, a.handler());
  net.add_node("b", secret, b.handler());
  net.add_node("c", secret, c.handler());
  REQUIRE(net.connect("a", "b"));
  REQUIRE(net.connect("c", "b"));
  net.inject("a", "b",
             {0x10, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  REQUIRE(net.send("c", "b", heartbeat{7, 0, {}, 0, {}}));
  net.deliver();
  CHECK_FALSE(net.connected("a", "b"));
  CHECK(net.last_refusal().find("from 'a' to 'b'") != std::string::npos);
  CHECK(net.connected("c", "b"));
  REQUIRE(b.seen.size() == 1);
  CHECK(b.seen[0].first == "c");
}

TEST_CASE("messages the drop hook selects are counted and never delivered") {
  fake_network net;
  recorder a, b;
  net.add_node("a", secret, a.handler());
  net.add_node("b", secret, b.handler());
  REQUIRE(net.connect("a", "b"));
  net.drop_if([](const std::string&, const std::string&, const message& m) {
    return std::holds_alternative<heartbeat>(m);
  });
  REQUIRE(net.send("a", "b", heartbeat{}));
  REQUIRE(net.send("a", "b", task_submit{}));
  CHECK(net.deliver() == 1);
  CHECK(net.stats().dropped == 1);
  REQUIRE(b.seen.size() == 1);
  CHECK(std::holds_alternative<task_submit>(b.seen[0].second));
}

TEST_CASE("held messages healed interleaved arrive in each connection's order, the "
          "connections' turns drawn from the seed") {
  // Three senders' heartbeats to one sink, held, then healed under `seed`: the order the
  // sink saw them in, as (sender, number).
  auto healed = [](uint32_t seed) {
    fake_network net;
    std::vector<std::pair<std::string, uint64_t>> order;
    net.add_node("sink", secret, [&](const std::string& from, const message& m) {
      order.emplace_back(from, std::get<heartbeat>(m).sent_ns);
    });
    net.hold_if([](auto&, auto&, auto&) { return true; });
    for (auto s : {"s0", "s1", "s2"}) {
      net.add_node(s, secret, [](auto&, auto&) {});
      REQUIRE(net.connect(s, "sink"));
      for (uint64_t i = 0; i < 8; ++i)
        REQUIRE(net.send(s, "sink", heartbeat{i, 0, {}, 0, {}}));
    }
    CHECK(net.deliver() == 0);
    CHECK(net.stats().held == 24);
    CHECK(net.heal_interleaved(seed) == 24);
    CHECK(net.send("s0", "sink", heartbeat{8, 0, {}, 0, {}})); // no longer held
    CHECK(net.deliver() == 1);
    return order;
  };
  std::set<std::vector<std::pair<std::string, uint64_t>>> orders;
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    auto order = healed(seed);
    REQUIRE(order.size() == 25);
    std::map<std::string, uint64_t> next;
    for (auto& [from, n] : order)
      CHECK(n == next[from]++);   // each connection's messages in the order sent
    CHECK(order == healed(seed)); // the same seed, the same turns
    orders.insert(order);
  }
  CHECK(orders.size() > 1); // other seeds, other interleavings
}

TEST_CASE("a handler can answer while messages are being delivered") {
  fake_network net;
  recorder a;
  net.add_node("a", secret, a.handler());
  net.add_node("echo", secret, [&net](const std::string& from, const message& m) {
    if (auto* h = std::get_if<heartbeat>(&m))
      REQUIRE(net.send("echo", from, heartbeat{h->sent_ns + 1, 0, {}, 0, {}}));
  });
  REQUIRE(net.connect("a", "echo"));
  REQUIRE(net.send("a", "echo", heartbeat{41, 0, {}, 0, {}}));
  CHECK(net.deliver() == 2);
  REQUIRE(a.seen.size() == 1);
  CHECK(std::get<heartbeat>(a.seen[0].second).sent_ns == 42);
}

TEST_CASE(
    "concurrent senders and a delivering thread: every message arrives once, in order") {
  fake_network net;
  std::mutex mtx;
  std::map<std::string, std::vector<uint64_t>> seen;
  net.add_node("sink", secret, [&](const std::string& from, const message& m) {
    std::lock_guard<std::mutex> g{mtx};
    seen[from].push_back(std::get<heartbeat>(m).sent_ns);
  });
  const int senders = 3, each = 500;
  for (int s = 0; s < senders; ++s) {
    net.add_node("s" + std::to_string(s), secret, [](auto&, auto&) {});
    REQUIRE(net.connect("s" + std::to_string(s), "sink"));
  }
  std::atomic<int> done{0};
  std::vector<std::thread> threads;
  for (int s = 0; s < senders; ++s)
    threads.emplace_back([&, s] {
      for (int i = 0; i < each; ++i)
        (void)net.send("s" + std::to_string(s), "sink",
                       heartbeat{static_cast<uint64_t>(i), 0, {}, 0, {}});
      ++done;
    });
  size_t delivered = 0;
  for (int spins = 0; spins < 100000 && delivered < size_t{senders * each}; ++spins)
    if (size_t n = net.deliver(); n > 0)
      delivered += n;
    else
      std::this_thread::yield();
  for (auto& t : threads)
    t.join();
  delivered += net.deliver();
  CHECK(delivered == size_t{senders * each});
  std::lock_guard<std::mutex> g{mtx};
  for (auto& [from, xs] : seen) {
    REQUIRE(xs.size() == size_t{each});
    for (int i = 0; i < each; ++i)
      CHECK(xs[static_cast<size_t>(i)] == static_cast<uint64_t>(i));
  }
}

TEST_CASE("a node's transport on the fake network reports its peers up and down") {
  fake_network net;
  std::vector<std::string> events;
  auto handlers = [&](const std::string& who) {
    endpoint_handlers h;
    h.on_message = [&, who](const std::string& from, message&&) {
      events.push_back(who + " got from " + from);
    };
    h.on_peer_up = [&, who](const std::string& p) { events.push_back(who + " up " + p); };
    h.on_peer_down = [&, who](const std::string& p, const std::string&) {
      events.push_back(who + " down " + p);
    };
    return h;
  };
  auto make = net.factory();
  endpoint_config a_cfg, b_cfg;
  a_cfg.name = "a";
  a_cfg.secret = secret;
  b_cfg.name = "b";
  b_cfg.secret = secret;
  auto a = make(a_cfg, handlers("a")).value();
  auto b = make(b_cfg, handlers("b")).value();
  CHECK_FALSE(make(a_cfg, handlers("a")));
  REQUIRE(a->connect("b", "ignored", 0, std::chrono::milliseconds(0)).value() == "b");
  CHECK(a->connected("b"));
  REQUIRE(a->send("b", heartbeat{}));
  net.deliver();
  b.reset(); // b leaves: a sees it go
  CHECK_FALSE(a->connected("b"));
  CHECK(events ==
        std::vector<std::string>{"b up a", "a up b", "b got from a", "a down b"});
}

TEST_CASE("a hostile peer cannot reflect a node's proof back to it on the fake network") {
  fake_network net;
  recorder head;
  net.add_node("head", secret, head.handler());
  net.add_node("worker-1", secret, recorder{}.handler());
  // The attacker holds two connections to the head and one the head dialled to it.
  auto in_one = net.open_raw("head").value(), in_two = net.open_raw("head").value();
  auto out = net.dial_raw("head", "head").value();
  auto nonce_one = std::get<hello>(net.take_raw(in_one).at(0)).nonce;
  auto head_out_hello = std::get<hello>(net.take_raw(out).at(0));
  (void)net.take_raw(in_two);
  // Asking the head to sign over its own nonce on a second connection gets nothing.
  REQUIRE(net.send_raw(in_two, hello{"worker-1", nonce_one, protocol_version}));
  CHECK(net.take_raw(in_two).empty());
  // What the head signs on the connection it dialled names it as the initiator, so it
  // opens neither of the attacker's connections into it.
  REQUIRE(net.send_raw(out, hello{"worker-1", nonce_one, protocol_version}));
  auto signed_out = net.take_raw(out);
  REQUIRE(signed_out.size() == 1);
  REQUIRE(
      net.send_raw(in_one, hello{"worker-1", head_out_hello.nonce, protocol_version}));
  auto r = net.send_raw(in_one, signed_out[0]);
  REQUIRE_FALSE(r);
  CHECK(r.err().message.find("does not hold the cluster secret") != std::string::npos);
  CHECK_FALSE(net.send_raw(in_one, stop_request{}));
  // Nor does the head accept its own name.
  auto in_three = net.open_raw("head").value();
  r = net.send_raw(in_three,
                   hello{"head", std::vector<uint8_t>(32, 9), protocol_version});
  REQUIRE_FALSE(r);
  CHECK(r.err().message.find("own name 'head'") != std::string::npos);
  net.deliver();
  CHECK(head.seen.empty());
  CHECK(net.stats().refused == 2);
}

namespace {

/// worker-1 dials `address` believing the head is there; the test, in the middle, opens
/// a connection to the head and relays the hellos both ways. Returns the worker's proof.
struct relay {
  fake_network& net;
  fake_network::raw_id from_worker, to_head;

  relay(fake_network& n, const std::string& address)
      : net(n), from_worker(n.dial_raw("worker-1", address).value()),
        to_head(n.open_raw("head").value()) {}

  message worker_proof() {
    REQUIRE(net.send_raw(to_head, net.take_raw(from_worker).at(0)));
    REQUIRE(net.send_raw(from_worker, net.take_raw(to_head).at(0)));
    auto proof = net.take_raw(from_worker);
    REQUIRE(proof.size() == 1);
    return proof[0];
  }
};

} // namespace

TEST_CASE("a worker's proof relayed to the head does not open it on the fake network") {
  fake_network net;
  recorder head;
  net.add_node("head", secret, head.handler());
  net.add_node("worker-1", secret, recorder{}.handler());
  relay mitm{net, "evil"};
  auto r = net.send_raw(mitm.to_head, mitm.worker_proof());
  REQUIRE_FALSE(r);
  CHECK(r.err().message.find("'worker-1' does not hold the cluster secret") !=
        std::string::npos);
  net.deliver();
  CHECK(head.seen.empty());
}

TEST_CASE("a peer that proves the secret on a raw connection reaches the node") {
  // The control case for the two above: the same steps with the real worker's address
  // authenticate, and a message then arrives under the proved name.
  fake_network net;
  recorder head;
  net.add_node("head", secret, head.handler());
  net.add_node("worker-1", secret, recorder{}.handler());
  relay mitm{net, "head"};
  REQUIRE(net.send_raw(mitm.to_head, mitm.worker_proof()));
  auto head_proof = net.take_raw(mitm.to_head);
  REQUIRE(head_proof.size() == 1);
  REQUIRE(net.send_raw(mitm.from_worker, head_proof[0]));
  REQUIRE(net.send_raw(mitm.to_head, heartbeat{11, 0, {}, 0, {}}));
  net.deliver();
  REQUIRE(head.seen.size() == 1);
  CHECK(head.seen[0].first == "worker-1");
}
