// The cluster protocol over the fake network: three cluster nodes in this process,
// every message really encoded and decoded, and the test choosing what is delivered,
// dropped or held back.

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "actors/node/cluster_node.hpp"
#include "tests/cluster/test_app.hpp"
#include "transport/fake_network.hpp"

using namespace std::chrono_literals;
using namespace swarm;
using namespace swarm::cluster_test;
using swarm::wire_msg::fake_network;

namespace {

cluster_config three_node_config() {
  cluster_config cfg;
  cfg.name = "fake";
  cfg.secret = "the-fake-network-secret";
  cfg.gcs_shards = 2;
  cfg.heartbeat_interval = 50ms;
  cfg.node_timeout = 400ms;
  cfg.inline_threshold = 64 * 1024;
  for (auto name : {"head", "worker-1", "worker-2"}) {
    node_spec n;
    n.name = name;
    n.address = "fake";
    n.role = n.name == "head" ? node_spec::role_type::head : node_spec::role_type::worker;
    n.cpus = 1;
    if (n.name == "worker-2") n.resources.set("special", 1);
    if (n.name != "head") n.resources.set("slot", 1); // work only the workers can run
    cfg.nodes.push_back(n);
  }
  return cfg;
}

/// A fake network and a pump thread that delivers what is queued (tests that need a fixed
/// order stop it and call `deliver` themselves). As a base, it outlives the nodes on it.
struct pumped_network {
  fake_network net;
  std::atomic<bool> pumping{true};
  std::thread pump{[this] {
    while (pumping)
      if (net.deliver() == 0) std::this_thread::sleep_for(200us);
  }};

  ~pumped_network() {
    pumping = false;
    pump.join();
  }
};

/// A head and two workers on one fake network.
struct fake_cluster : pumped_network {
  application app;
  cluster_config cfg = three_node_config();
  std::unique_ptr<actors::cluster_node> head, w1, w2;
  std::unique_ptr<context> driver;

  explicit fake_cluster(size_t store_bytes = 0) {
    if (store_bytes > 0) cfg.object_store_bytes = store_bytes;
    cfg.spill = false; // a full store refuses: what these tests check
    register_all(app);
    head = std::make_unique<actors::cluster_node>(app, cfg, "head", net.factory());
    w1 = std::make_unique<actors::cluster_node>(app, cfg, "worker-1", net.factory());
    w2 = std::make_unique<actors::cluster_node>(app, cfg, "worker-2", net.factory());
    REQUIRE(head->wait_for_nodes(3, 10s) == 3);
    driver = std::make_unique<context>(*head, head->new_owner_id());
  }

  ~fake_cluster() {
    driver.reset();
    w1.reset();
    w2.reset();
    head.reset();
  }

  static task_options on(const std::string& node) {
    task_options o;
    o.node = node;
    return o;
  }

  /// Counts, without changing anything, the messages `pred` selects.
  std::shared_ptr<std::atomic<size_t>> spy(fake_network::predicate pred) {
    auto n = std::make_shared<std::atomic<size_t>>(0);
    net.drop_if([n, pred](auto& from, auto& to, auto& m) {
      if (pred(from, to, m)) ++*n;
      return false;
    });
    return n;
  }

  /// Waits (bounded) until `pred` holds.
  static bool eventually(const std::function<bool()>& pred,
                         std::chrono::milliseconds timeout = 5s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!pred()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(5ms);
    }
    return true;
  }
};

template <class T> bool is(const wire_msg::message& m) {
  return std::holds_alternative<T>(m);
}

} // namespace

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

TEST_CASE("garbage from one node closes only its connection and fails its work") {
  fake_cluster c;
  auto add = c.app.find_function<int(int, int)>("add").value();
  c.net.hold_if([](auto& from, auto&, auto& m) {
    return from == "worker-1" && is<wire_msg::task_result>(m);
  });
  auto pending = c.driver->submit(c.on("worker-1"), add, 1, 1);
  REQUIRE(fake_cluster::eventually([&] { return c.net.stats().held == 1; }));
  c.net.inject("worker-1", "head", {0x10, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto r = pending.get(5s);
  REQUIRE_FALSE(r);
  CHECK(r.err().code == errc::worker_died);
  CHECK(c.net.last_refusal().find("from 'worker-1' to 'head'") != std::string::npos);
  CHECK(c.net.stats().refused == 1);
  // Releasing the stale result afterwards changes nothing, and the others keep working.
  c.net.release_held();
  CHECK(c.driver->submit(c.on("worker-2"), add, 3, 4).get(10s).value() == 7);
}

TEST_CASE("the head's control store holds the node, job and object tables") {
  fake_cluster c;
  auto rows = [&](const std::string& table) {
    return c.head->control_table(table).value();
  };
  REQUIRE(fake_cluster::eventually([&] { return rows("node").size() == 3; }));
  auto nodes = rows("node");
  for (auto& r : nodes)
    CHECK(std::get<wire_msg::node_info>(r).alive);
  CHECK_FALSE(c.w1->control_table("node"));

  // A driver on worker-2 starts and ends its job; the head's table follows.
  c.w2->job_event(77, true);
  REQUIRE(fake_cluster::eventually([&] { return rows("job").size() == 1; }));
  auto started = std::get<wire_msg::job_info>(rows("job")[0]);
  CHECK(started.driver == "worker-2");
  CHECK(started.running);
  c.w2->job_event(77, false);
  REQUIRE(fake_cluster::eventually(
      [&] { return !std::get<wire_msg::job_info>(rows("job")[0]).running; }));
  auto ended = std::get<wire_msg::job_info>(rows("job")[0]);
  CHECK(ended.started_ms == started.started_ms);
  CHECK(ended.ended_ms >= started.started_ms);

  // A large result kept on worker-1 is in the object table while its owner holds it.
  auto blob_fn = c.app.find_function<std::vector<uint8_t>(int)>("blob").value();
  {
    auto big = c.driver->submit(c.on("worker-1"), blob_fn, 1 << 20);
    REQUIRE(big.get(10s));
    REQUIRE(fake_cluster::eventually([&] { return rows("object").size() == 1; }));
    auto loc = std::get<wire_msg::object_location>(rows("object")[0]);
    CHECK(loc.node == "worker-1");
    CHECK(loc.size > (1 << 20));
  }
  CHECK(fake_cluster::eventually([&] { return rows("object").empty(); }));
}

TEST_CASE(
    "an actor placed by resources from a worker goes through the head's scheduler") {
  fake_cluster c;
  auto spawn_special = c.app.find_function<int(int)>("spawn_special").value();
  auto routes = std::make_shared<std::vector<std::string>>();
  auto routes_mtx = std::make_shared<std::mutex>();
  c.net.drop_if([=](auto& from, auto& to, auto& m) {
    std::lock_guard<std::mutex> g{*routes_mtx};
    if (auto* a = std::get_if<wire_msg::actor_create>(&m))
      routes->push_back(from + ">" + to + (a->placed ? " placed" : " to place"));
    if (is<wire_msg::actor_created>(m)) routes->push_back(from + ">" + to + " created");
    return false;
  });
  CHECK(c.driver->submit(c.on("worker-1"), spawn_special, 41).get(10s).value() == 42);
  {
    std::lock_guard<std::mutex> g{*routes_mtx};
    CHECK(*routes == std::vector<std::string>{"worker-1>head to place",
                                              "head>worker-2 placed",
                                              "worker-2>worker-1 created"});
    routes->clear();
  }
  // On the head the scheduler is asked directly.
  auto counter_t = c.app.find_actor_type<counter>("counter").value();
  actor_options o;
  o.resources.set("special", 1);
  CHECK(c.driver->spawn(o, counter_t, 1).call(&counter::add, 1).get(10s).value() == 2);
  std::lock_guard<std::mutex> g{*routes_mtx};
  CHECK(*routes ==
        std::vector<std::string>{"head>worker-2 placed", "worker-2>head created"});
}

TEST_CASE("a task whose node is lost runs again on another node, within its retries") {
  fake_cluster c;
  auto where = c.app.find_function<std::string()>("where").value();
  // Results from worker-1 are held back: its task is in flight when its node goes.
  c.net.hold_if([](auto& from, auto&, auto& m) {
    return from == "worker-1" && is<wire_msg::task_result>(m);
  });
  task_options on_a_worker;
  on_a_worker.resources.set("slot", 1); // the head has none: the scheduler picks a worker
  auto try_workers = [&](uint32_t retries) {
    task_options o = on_a_worker;
    o.max_retries = retries;
    return c.driver->submit(o, where);
  };
  // With equal load the scheduler takes worker-1 first.
  auto retried = try_workers(3);
  REQUIRE(fake_cluster::eventually([&] { return c.net.stats().held == 1; }));
  c.net.disconnect("head", "worker-1");
  CHECK(retried.get(10s).value() == "worker-2");

  // Without retries the loss is the caller's error, naming the node.
  c.net.hold_if([](auto& from, auto&, auto& m) {
    return from != "head" && is<wire_msg::task_result>(m);
  });
  auto held_before = c.net.stats().held;
  auto once = try_workers(0);
  REQUIRE(fake_cluster::eventually([&] { return c.net.stats().held > held_before; }));
  // Whichever worker holds it, cut it off from the head.
  c.net.disconnect("head", "worker-1");
  c.net.disconnect("head", "worker-2");
  auto r = once.get(10s);
  REQUIRE_FALSE(r);
  CHECK(r.err().code == errc::worker_died);
  CHECK(r.err().message.find("after 1 attempt") != std::string::npos);
}

TEST_CASE("a frozen node is found dead by its silence and its task runs elsewhere") {
  fake_cluster c;
  auto where = c.app.find_function<std::string()>("where").value();
  // Frozen: worker-1's connection stays open, but nothing more comes from it.
  std::atomic<bool> frozen{true};
  c.net.drop_if([&](auto& from, auto&, auto&) { return frozen && from == "worker-1"; });
  task_options o;
  o.resources.set("slot", 1); // equal load: the scheduler takes worker-1 first
  auto start = std::chrono::steady_clock::now();
  auto r = c.driver->submit(o, where);
  CHECK(r.get(10s).value() == "worker-2");
  // Within node_timeout (400 ms) plus a tick or two, far under the 2 s default.
  CHECK(std::chrono::steady_clock::now() - start < 2s);
  CHECK(c.head->wait_for_nodes(3, 0ms) == 2);
  // Thawed, it joins again.
  frozen = false;
  CHECK(
      fake_cluster::eventually([&] { return c.head->wait_for_nodes(3, 0ms) == 3; }, 5s));
}

TEST_CASE(
    "a large result whose node dies before its owner has it is remade by its task") {
  fake_cluster c;
  auto blob_fn = c.app.find_function<std::vector<uint8_t>(int)>("blob").value();
  // The owner's copy never arrives from worker-1: its chunks are held back.
  c.net.hold_if([](auto& from, auto&, auto& m) {
    return from == "worker-1" && is<wire_msg::object_chunk>(m);
  });
  task_options o;
  o.resources.set("slot", 1);
  auto big = c.driver->submit(o, blob_fn, 1 << 20);
  REQUIRE(fake_cluster::eventually([&] { return c.net.stats().held >= 1; }));
  c.net.disconnect("head", "worker-1", "killed by the test");
  // Lineage: the task that made it runs again, on worker-2.
  auto v = big.get(10s);
  REQUIRE(v);
  CHECK(v->size() == size_t{1} << 20);
  CHECK((*v)[300] == static_cast<uint8_t>(300));
  auto rows = c.head->control_table("object").value();
  REQUIRE(rows.size() == 1);
  CHECK(std::get<wire_msg::object_location>(rows[0]).node == "worker-2");
}

TEST_CASE("an input whose holder died is shipped from its owner's copy") {
  fake_cluster c;
  auto blob_fn = c.app.find_function<std::vector<uint8_t>(int)>("blob").value();
  auto read =
      c.app.find_function<std::vector<int64_t>(const std::vector<uint8_t>&)>("read_blob")
          .value();
  auto big = c.driver->submit(c.on("worker-1"), blob_fn, 1 << 20);
  REQUIRE(big.get(10s));
  // worker-1 goes; the object table forgets it held the result.
  c.net.drop_if(
      [](auto& from, auto& to, auto&) { return from == "worker-1" || to == "worker-1"; });
  c.net.disconnect("head", "worker-1", "killed by the test");
  CHECK(fake_cluster::eventually(
      [&] { return c.head->control_table("object").value().empty(); }));
  auto sum = c.driver->submit(c.on("worker-2"), read, big).get(10s);
  REQUIRE(sum);
  int64_t expected = 0;
  for (int i = 0; i < (1 << 20); ++i)
    expected += static_cast<uint8_t>(i);
  CHECK(sum->at(1) == expected);
}

TEST_CASE("an actor whose node dies is restarted elsewhere from its checkpoint") {
  fake_cluster c;
  auto counter_t = c.app.find_actor_type<counter>("counter").value();
  actor_options o;
  o.resources.set("slot", 1); // on a worker: worker-1 first
  o.max_restarts = 1;
  o.checkpoint_every = 1;
  o.max_task_retries = 1;
  auto a = c.driver->spawn(o, counter_t, 100);
  CHECK(a.call(&counter::node).get(10s).value() == "worker-1");
  CHECK(a.call(&counter::add, 12).get(10s).value() == 112); // saved with the owner
  // A call in flight when the node goes is sent again to the restarted actor, which
  // resumes from the last state its owner received (112: the one after this call is
  // held back with the call's result).
  c.net.hold_if([](auto& from, auto&, auto& m) {
    return from == "worker-1" &&
           (is<wire_msg::task_result>(m) || is<wire_msg::actor_checkpoint>(m));
  });
  auto in_flight = a.call(&counter::add, 1);
  REQUIRE(fake_cluster::eventually([&] { return c.net.stats().held >= 2; }));
  c.net.drop_if(
      [](auto& from, auto& to, auto&) { return from == "worker-1" || to == "worker-1"; });
  c.net.disconnect("head", "worker-1", "killed by the test");
  CHECK(in_flight.get(10s).value() == 113);
  CHECK(a.call(&counter::node).get(10s).value() == "worker-2");
  CHECK(a.call(&counter::add, 1).get(10s).value() == 114);
  // Its one restart is used: losing worker-2 too ends it, and says why.
  c.net.drop_if([](auto& from, auto& to, auto&) {
    return from != "head" || to != "head"; // both workers are gone for good
  });
  c.net.disconnect("head", "worker-2", "killed by the test");
  // The head's role actors handle the loss on their own threads: a call made meanwhile
  // fails as running on the lost node; once the actor is found dead, calls say why.
  swarm::result<int> r = 0;
  CHECK(fake_cluster::eventually([&] {
    r = a.call(&counter::add, 1).get(10s);
    return !r && r.err().message.find("restarts used up") != std::string::npos;
  }));
  REQUIRE_FALSE(r);
  CHECK(r.err().code == errc::actor_died);
}

TEST_CASE("calls to an actor on another node wait for their future arguments, in order") {
  fake_cluster c;
  auto counter_t = c.app.find_actor_type<counter>("counter").value();
  auto nap = c.app.find_function<int(const std::string&, int)>("nap_pid").value();
  auto add = c.app.find_function<int(int, int)>("add").value();
  actor_options o;
  o.node = "worker-1";
  auto a = c.driver->spawn(o, counter_t, 100);
  auto slow = c.driver->submit(c.on("worker-2"), nap, std::string{"/dev/null"}, 300);
  auto first = a.call(&counter::add, slow);
  auto second = a.call(&counter::add, 1); // ready at once, still sent second
  auto pid = static_cast<int>(::getpid());
  CHECK(first.get(10s).value() == 100 + pid);
  CHECK(second.get(10s).value() == 101 + pid);
  // A future that failed fails the call that needed it, naming it.
  auto failed = c.driver->submit(c.on("nowhere"), add, 1, 1);
  auto r = a.call(&counter::add, failed).get(10s);
  REQUIRE_FALSE(r);
  CHECK(r.err().code == errc::dependency_failed);
  CHECK(a.call(&counter::add, 0).get(10s).value() == 101 + pid);
}

namespace {

// `where` under another signature: its result is an int.
int where_as_int() {
  return 0;
}

// The three nodes of `three_node_config`, each with its own registrations: the head
// and worker-1 register everything, worker-2 what `worker_2` registers.
struct mixed_cluster : pumped_network {
  application full, partial;
  cluster_config cfg = three_node_config();
  std::unique_ptr<actors::cluster_node> head, w1, w2;

  explicit mixed_cluster(const std::function<void(application&)>& worker_2) {
    register_all(full);
    worker_2(partial);
    head = std::make_unique<actors::cluster_node>(full, cfg, "head", net.factory());
    w1 = std::make_unique<actors::cluster_node>(full, cfg, "worker-1", net.factory());
    w2 = std::make_unique<actors::cluster_node>(partial, cfg, "worker-2", net.factory());
  }

  ~mixed_cluster() {
    w1.reset();
    w2.reset();
    head.reset();
  }
};

} // namespace

TEST_CASE("work goes only to the nodes that registered its function, and work pinned to "
          "a node without it fails at once, naming the node and the function") {
  mixed_cluster c{[](application& app) { app.function("add", add); }};
  REQUIRE(c.head->wait_for_nodes(3, 10s) == 3);
  context driver{*c.head, c.head->new_owner_id()};
  auto where = c.full.find_function<std::string()>("where").value();
  // Work only the workers can run: worker-2 has the resource but not the function.
  task_options on_workers;
  on_workers.resources.set("slot", 0.1);
  std::vector<object_ref<std::string>> ran;
  for (int i = 0; i < 20; ++i)
    ran.push_back(driver.submit(on_workers, where));
  for (auto& r : ran)
    CHECK(r.get(10s).value() == "worker-1");
  auto pinned = driver.submit(fake_cluster::on("worker-2"), where).get(10s);
  REQUIRE_FALSE(pinned);
  CHECK(pinned.err().code == errc::unregistered);
  CHECK(pinned.err().message.find("node 'worker-2' cannot run function 'where': it is "
                                  "not registered there") != std::string::npos);
  // What both workers registered still goes to either.
  auto add_fn = c.full.find_function<int(int, int)>("add").value();
  CHECK(driver.submit(fake_cluster::on("worker-2"), add_fn, 2, 3).get(10s).value() == 5);
}

TEST_CASE("a node that registered a function under another signature is refused at "
          "join, with both signatures and nodes named") {
  mixed_cluster c{[](application& app) { app.function("where", where_as_int); }};
  // worker-2 is stopped by the head instead of joining.
  REQUIRE(c.w2->wait_for_stop(10s));
  auto why = c.w2->stop_reason();
  CHECK(why.find("node 'worker-2' cannot join: function 'where' is int() on node "
                 "'worker-2' but std::string() on node") != std::string::npos);
  CHECK(c.head->wait_for_nodes(3, 300ms) == 2);
}

TEST_CASE("work pinned to a node of the file that has not joined waits for it, and fails "
          "naming it once join_wait passed") {
  pumped_network p;
  auto& net = p.net;
  application app;
  register_all(app);
  auto cfg = three_node_config();
  cfg.join_wait = 400ms;
  {
    auto head = std::make_unique<actors::cluster_node>(app, cfg, "head", net.factory());
    auto w1 = std::make_unique<actors::cluster_node>(app, cfg, "worker-1", net.factory());
    REQUIRE(head->wait_for_nodes(2, 10s) == 2);
    context driver{*head, head->new_owner_id()};
    auto where = app.find_function<std::string()>("where").value();
    // worker-2 never comes: the task fails after join_wait, naming it.
    auto never = driver.submit(fake_cluster::on("worker-2"), where).get(10s);
    REQUIRE_FALSE(never);
    CHECK(never.err().code == errc::node_unreachable);
    CHECK(never.err().message ==
          "'where' waited 400 ms for node 'worker-2', which has not joined the cluster");
    // Now it comes while the task waits.
    auto waiting = driver.submit(fake_cluster::on("worker-2"), where);
    CHECK_FALSE(waiting.ready());
    auto w2 = std::make_unique<actors::cluster_node>(app, cfg, "worker-2", net.factory());
    CHECK(waiting.get(10s).value() == "worker-2");
    // A node the file does not name fails at once.
    auto nobody = driver.submit(fake_cluster::on("worker-9"), where).get(1s);
    REQUIRE_FALSE(nobody);
    CHECK(nobody.err().message.find("worker-9") != std::string::npos);
  }
}
