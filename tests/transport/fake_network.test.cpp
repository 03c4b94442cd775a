#include <doctest/doctest.h>

#include <atomic>
#include <map>
#include <mutex>
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
  REQUIRE(net.send("a", "b", heartbeat{1, 0.5, {}, 0}));
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
    REQUIRE(net.send(
        "a", "b",
        object_chunk{{1, 1}, i * 10, 30, std::vector<uint8_t>(10), {}, nullptr, 0}));
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
  REQUIRE(net.send("c", "b", heartbeat{7, 0, {}, 0}));
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

TEST_CASE("a handler can answer while messages are being delivered") {
  fake_network net;
  recorder a;
  net.add_node("a", secret, a.handler());
  net.add_node("echo", secret, [&net](const std::string& from, const message& m) {
    if (auto* h = std::get_if<heartbeat>(&m))
      REQUIRE(net.send("echo", from, heartbeat{h->sent_ns + 1, 0, {}, 0}));
  });
  REQUIRE(net.connect("a", "echo"));
  REQUIRE(net.send("a", "echo", heartbeat{41, 0, {}, 0}));
  CHECK(net.deliver() == 2);
  REQUIRE(a.seen.size() == 1);
  CHECK(std::get<heartbeat>(a.seen[0].second).sent_ns == 42);
}

TEST_CASE("concurrent senders and a delivering thread: every message arrives once, in order") {
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
                       heartbeat{static_cast<uint64_t>(i), 0, {}, 0});
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
  CHECK(events == std::vector<std::string>{"b up a", "a up b", "b got from a", "a down b"});
}
