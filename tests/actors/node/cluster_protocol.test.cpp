// The cluster protocol over the fake network: tasks, values and actors across nodes.

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "tests/actors/node/fake_cluster.hpp"

using namespace std::chrono_literals;
using namespace swarm;
using namespace swarm::fake_test;

TEST_CASE("over the fake network, tasks run on the node they are sent to") {
  fake_cluster c;
  auto where = c.app.find_function<std::string()>("where").value();
  auto add = c.app.find_function<int(int, int)>("add").value();
  CHECK(c.driver->submit(c.on("worker-1"), where).get(10s).value() == "worker-1");
  CHECK(c.driver->submit(c.on("worker-2"), where).get(10s).value() == "worker-2");
  CHECK(c.driver->submit(where).get(10s).value() == "head");
  // A future made on worker-1 is an argument on worker-2: its value moves once, from
  // worker-1 to worker-2, never through the head.
  auto through_head = c.spy([](auto& from, auto& to, auto& m) {
    return is<wire_msg::object_pull>(m) && from == "worker-2" && to == "head";
  });
  auto a = c.driver->submit(c.on("worker-1"), add, 1, 2);
  CHECK(c.driver->submit(c.on("worker-2"), add, a, 10).get(10s).value() == 13);
  CHECK(*through_head == 0);
  swarm::task_options special;
  special.resources.set("special", 1);
  CHECK(c.driver->submit(special, where).get(10s).value() == "worker-2");
}

TEST_CASE("an error from work on another node names that node") {
  fake_cluster c;
  auto fail_with = c.app.find_function<int(std::string)>("fail_with").value();
  auto thrown =
      c.driver->submit(c.on("worker-1"), fail_with, std::string{"boom"}).get(10s);
  REQUIRE_FALSE(thrown);
  CHECK(thrown.err().code == errc::application_error);
  CHECK(thrown.err().message == "'fail_with' threw: boom (on node 'worker-1')");

  auto cls = c.app.find_actor_type<counter>("counter").value();
  actor_options special;
  special.resources.set("special", 1);
  auto a = c.driver->spawn(special, cls, 0);
  auto failed = a.call(&counter::fail, std::string{"bang"}).get(10s);
  REQUIRE_FALSE(failed);
  CHECK(failed.err().message.find("bang") != std::string::npos);
  CHECK(failed.err().message.find("(on node 'worker-2')") != std::string::npos);
  // A call that names the node already is not named twice.
  auto wrong = c.driver->submit(c.on("worker-1"), fail_with, std::string{"at 'worker-1'"})
                   .get(10s);
  REQUIRE_FALSE(wrong);
  CHECK(wrong.err().message == "'fail_with' threw: at 'worker-1'");
}

TEST_CASE("a result lost on the wire fails its future once the connection closes") {
  fake_cluster c;
  auto add = c.app.find_function<int(int, int)>("add").value();
  c.net.drop_if([](auto& from, auto&, auto& m) {
    return from == "worker-1" && is<wire_msg::task_result>(m);
  });
  auto lost = c.driver->submit(c.on("worker-1"), add, 1, 1);
  auto early = lost.get(300ms);
  REQUIRE_FALSE(early);
  CHECK(early.err().code == errc::timeout);
  c.net.disconnect("head", "worker-1");
  auto r = lost.get(5s);
  REQUIRE_FALSE(r);
  CHECK(r.err().code == errc::worker_died);
  CHECK(r.err().message.find("worker-1") != std::string::npos);
  // The other worker was never affected.
  CHECK(c.driver->submit(c.on("worker-2"), add, 2, 2).get(10s).value() == 4);
  CHECK(c.net.stats().dropped >= 1);
}

TEST_CASE("a large result is pulled in chunks on the bulk lane, once per node") {
  fake_cluster c;
  auto blob_fn = c.app.find_function<std::vector<uint8_t>(int)>("blob").value();
  auto read =
      c.app.find_function<std::vector<int64_t>(const std::vector<uint8_t>&)>("read_blob")
          .value();
  const int size = 9 << 20; // three 4 MiB chunks, the first cut where the head ends
  auto chunks_to_w2 = c.spy([](auto&, auto& to, auto& m) {
    return to == "worker-2" && is<wire_msg::object_chunk>(m);
  });
  auto big = c.driver->submit(c.on("worker-1"), blob_fn, size);
  REQUIRE(big.get(10s));
  auto bulk_before = c.net.stats().frames[static_cast<size_t>(wire_msg::lane::bulk)];
  // Two readers on worker-2: the object crosses to worker-2 once.
  auto r1 = c.driver->submit(c.on("worker-2"), read, big);
  auto r2 = c.driver->submit(c.on("worker-2"), read, big);
  auto expected = int64_t{0};
  for (int i = 0; i < size; ++i)
    expected += static_cast<uint8_t>(i);
  CHECK(r1.get(20s).value().at(1) == expected);
  CHECK(r2.get(20s).value().at(1) == expected);
  // The head, the rest of the first 4 MiB (asked for again), the other two.
  CHECK(*chunks_to_w2 == 4);
  // Four chunk requests and four chunks, all on the bulk lane.
  CHECK(c.net.stats().frames[static_cast<size_t>(wire_msg::lane::bulk)] - bulk_before ==
        8);
}

TEST_CASE("what a node remembers of pulled values is bounded by the values alive and its "
          "budget") {
  fake_cluster c;
  auto blob_fn = c.app.find_function<std::vector<uint8_t>(int)>("blob").value();
  // Results over the inline threshold: each is pulled by the head, read, and dropped.
  for (int i = 0; i < 600; ++i)
    REQUIRE(c.driver->submit(c.on("worker-1"), blob_fn, 100 << 10).get(10s));
  auto kept = c.driver->submit(c.on("worker-1"), blob_fn, 100 << 10);
  REQUIRE(kept.get(10s));
  // Kept as secondary copies within their budget; remembered weakly past it.
  auto s = c.head->stats();
  CHECK(s.pulled_entries <= 128);
  CHECK(s.pulled_bytes >= (100u << 10));
  CHECK(s.pulled_bytes <= (256u << 20));
}

TEST_CASE(
    "a pulled copy counts against the reading node's store until its owner frees the "
    "object") {
  fake_cluster c;
  auto blob_fn = c.app.find_function<std::vector<uint8_t>(int)>("blob").value();
  const size_t size = 9 << 20;
  auto w1_before = c.w1->stats().store_bytes;
  auto big = c.driver->submit(c.on("worker-1"), blob_fn, static_cast<int>(size));
  // Read by its owner on the head: pulled, counted there as a copy.
  REQUIRE(big.get(10s).value().size() == size);
  auto head = c.head->stats();
  CHECK(head.pulled_bytes >= size);
  CHECK(head.pulled_bytes < size + (1 << 20));
  CHECK(head.store_bytes >= head.pulled_bytes);
  CHECK(c.w1->stats().store_bytes >= w1_before + size);
  // Freed by its owner: the head's copy and worker-1's primary go, and so do their
  // counts.
  big = {};
  CHECK(fake_cluster::eventually([&] { return c.head->stats().pulled_bytes == 0; }));
  CHECK(fake_cluster::eventually([&] { return c.w1->stats().store_bytes == w1_before; }));
}

TEST_CASE("copies other nodes pulled are dropped, and uncounted, when the owner frees "
          "the object") {
  fake_cluster c;
  auto blob_fn = c.app.find_function<std::vector<uint8_t>(int)>("blob").value();
  auto read =
      c.app.find_function<std::vector<int64_t>(const std::vector<uint8_t>&)>("read_blob")
          .value();
  const size_t size = 3 << 20;
  // A put on the head, read on both workers: each pulls it from the head and keeps it.
  auto put = c.driver->put(std::vector<uint8_t>(size, 5));
  REQUIRE(c.driver->submit(c.on("worker-1"), read, put).get(10s));
  REQUIRE(c.driver->submit(c.on("worker-2"), read, put).get(10s));
  CHECK(c.w1->stats().pulled_bytes >= size);
  CHECK(c.w2->stats().pulled_bytes >= size);
  put = {};
  CHECK(fake_cluster::eventually([&] { return c.w1->stats().pulled_bytes == 0; }));
  CHECK(fake_cluster::eventually([&] { return c.w2->stats().pulled_bytes == 0; }));
  // A result held on worker-1 for the head, read on worker-2: pulled from worker-1,
  // which drops its primary when the head frees it, and tells worker-2.
  auto made = c.driver->submit(c.on("worker-1"), blob_fn, static_cast<int>(size));
  REQUIRE(c.driver->submit(c.on("worker-2"), read, made).get(10s));
  CHECK(c.w2->stats().pulled_bytes >= size);
  made = {};
  CHECK(fake_cluster::eventually([&] { return c.w2->stats().pulled_bytes == 0; }));
  CHECK(fake_cluster::eventually([&] { return c.w1->stats().store_bytes == 0; }));
}

TEST_CASE("a result that does not fit its owner's store fails with both sizes named") {
  fake_cluster c{4 << 20};
  auto blob_fn = c.app.find_function<std::vector<uint8_t>(int)>("blob").value();
  // The head holds 2 MiB of its 4: a 3 MiB copy does not fit.
  auto here = c.driver->put(std::vector<uint8_t>(2 << 20, 1));
  auto big = c.driver->submit(c.on("worker-1"), blob_fn, 3 << 20);
  auto r = big.get(10s);
  REQUIRE_FALSE(r);
  CHECK(r.err().code == swarm::errc::store_full);
  CHECK(r.err().message.find("node 'head' cannot pull") != std::string::npos);
  CHECK(r.err().message.find("does not fit in the object store") != std::string::npos);
  // As a result that does not fit its node's store fails, so does one that does not fit
  // its owner's: its primary is let go, and neither node counts it any more.
  CHECK(c.head->stats().pulled_bytes == 0);
  CHECK(fake_cluster::eventually([&] { return c.w1->stats().store_bytes == 0; }));
}

TEST_CASE("calls to a named actor go from the caller's node straight to the actor's") {
  fake_cluster c;
  auto counter_t = c.app.find_actor_type<counter>("counter").value();
  auto call_named_fn =
      c.app.find_function<int(const std::string&, int)>("call_named").value();
  actor_options o;
  o.node = "worker-2";
  o.name = "tally";
  auto a = c.driver->spawn(o, counter_t, 100);
  CHECK(a.call(&counter::add, 1).get(10s).value() == 101);
  auto calls = std::make_shared<std::map<std::pair<std::string, std::string>, int>>();
  auto calls_mtx = std::make_shared<std::mutex>();
  c.net.drop_if([=](auto& from, auto& to, auto& m) {
    if (is<wire_msg::actor_call>(m)) {
      std::lock_guard<std::mutex> g{*calls_mtx};
      ++(*calls)[{from, to}];
    }
    return false;
  });
  // From a task on worker-1: found by name through the head, then called directly.
  CHECK(c.driver->submit(c.on("worker-1"), call_named_fn, std::string{"tally"}, 10)
            .get(10s)
            .value() == 111);
  std::lock_guard<std::mutex> g{*calls_mtx};
  CHECK((*calls)[{"worker-1", "worker-2"}] == 1);
  CHECK(calls->size() == 1);
}

TEST_CASE("an actor on another node stops when its creator drops the last handle") {
  fake_cluster c;
  auto ballast_t = c.app.find_actor_type<ballast>("ballast").value();
  auto kills = c.spy([](auto& from, auto& to, auto& m) {
    return from == "head" && to == "worker-1" && is<wire_msg::actor_kill>(m);
  });
  auto before = ballast::live().load();
  actor_options o;
  o.node = "worker-1";
  {
    auto a = c.driver->spawn(o, ballast_t, 4);
    CHECK(a.call(&ballast::kib).get(10s).value() == 4);
    CHECK(ballast::live() == before + 1);
    auto copy = a; // a second handle keeps it
  }
  CHECK(fake_cluster::eventually([&] { return ballast::live() == before; }));
  CHECK(*kills == 1);
  // A named actor lives on without handles, until killed.
  o.name = "kept";
  { (void)c.driver->spawn(o, ballast_t, 4); }
  auto found = c.driver->find_actor(ballast_t, "kept").value();
  CHECK(found.call(&ballast::kib).get(10s).value() == 4);
  CHECK(ballast::live() == before + 1);
  CHECK(*kills == 1);
}

TEST_CASE(
    "a node whose heartbeats stop reaching the head is marked dead, then alive again") {
  fake_cluster c;
  std::atomic<bool> silent{true};
  c.net.drop_if([&](auto& from, auto&, auto& m) {
    return silent && from == "worker-2" && is<wire_msg::heartbeat>(m);
  });
  // node_timeout is 400 ms: detected well within the bound.
  CHECK(
      fake_cluster::eventually([&] { return c.head->wait_for_nodes(3, 0ms) == 2; }, 5s));
  // The control store's node table says so too.
  CHECK(fake_cluster::eventually([&] {
    auto rows = c.head->control_table("node").value();
    for (auto& r : rows) {
      auto& n = std::get<wire_msg::node_info>(r);
      if (n.name == "worker-2") return !n.alive;
    }
    return false;
  }));
  silent = false;
  CHECK(
      fake_cluster::eventually([&] { return c.head->wait_for_nodes(3, 0ms) == 3; }, 5s));
}

TEST_CASE("a result for a client that has not connected to the node that made it waits "
          "there until the client connects") {
  fake_cluster c;
  // The client cannot reach worker-2 for now, and nobody dials a client.
  auto apart = [](const std::string& a, const std::string& b) {
    return (a == "client-1" && b == "worker-2") || (a == "worker-2" && b == "client-1");
  };
  c.net.refuse_connections_if(apart);
  auto cfg = c.cfg;
  node_spec me;
  me.name = "client-1";
  me.address = "fake";
  me.client = true;
  me.owner_index = 100;
  cfg.nodes.push_back(me);
  auto client =
      std::make_unique<actors::cluster_node>(c.app, cfg, "client-1", c.net.factory());
  // It has the head's table: it knows worker-2 and its resources.
  REQUIRE(fake_cluster::eventually([&] {
    auto alive = client->alive_nodes();
    return std::find(alive.begin(), alive.end(), "worker-2") != alive.end();
  }));
  auto results_to_client = c.spy([](auto& from, auto& to, auto& m) {
    return from == "worker-2" && to == "client-1" && is<wire_msg::task_result>(m);
  });
  context driver{*client, client->new_owner_id()};
  swarm::task_options special; // only worker-2 has it: placed there by the head
  special.resources.set("special", 1);
  auto where = c.app.find_function<std::string()>("where").value();
  auto r = driver.submit(special, where);
  CHECK_FALSE(r.get(500ms)); // ran on worker-2, where its result waits for the client
  CHECK(*results_to_client == 0);
  c.net.refuse_connections_if(nullptr); // the client's next dial gets through
  CHECK(r.get(10s).value() == "worker-2");
  CHECK(*results_to_client == 1);
  client.reset();
}

TEST_CASE("every message kind that travels between nodes has a route on the head, and "
          "workers leave the head's own unrouted or refuse it") {
  fake_cluster c;
  using actors::delivery;
  for (size_t i = 0; i < std::variant_size_v<wire_msg::message>; ++i) {
    std::string kind = wire_msg::message_names[i];
    // The handshake's messages and a connection's goodbye end at the endpoint; a
    // key-value row is only a record of the control store's log; these answers go to
    // tools and clients, never to nodes.
    bool never_routed = kind == "hello" || kind == "proof" || kind == "goodbye" ||
                        kind == "kv_entry" || kind == "list_reply" ||
                        kind == "client_welcome" || kind == "job_answer";
    CHECK_MESSAGE((c.head->routes().route_of(i) == delivery::none) == never_routed, kind);
    // A worker answers a join asked of it by refusing it, naming the head's address.
    bool heads_own = kind == "group_ask";
    CHECK_MESSAGE((c.w1->routes().route_of(i) == delivery::none) ==
                      (never_routed || heads_own),
                  kind);
  }
  // Work and results go on from the reading thread; what waits on actors goes to the
  // agent.
  CHECK(c.w1->routes().route_of(wire_msg::message{wire_msg::task_submit{}}.index()) ==
        delivery::in_place);
  CHECK(c.w1->routes().route_of(wire_msg::message{wire_msg::actor_create{}}.index()) ==
        delivery::posted);
  CHECK(c.w1->routes().route_of(wire_msg::message{wire_msg::object_chunk{}}.index()) ==
        delivery::mailbox);
}
