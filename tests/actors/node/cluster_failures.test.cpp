// The cluster protocol over the fake network: broken links, lost and frozen nodes, the
// control store, and where work may go.

#include <doctest/doctest.h>

#include <utility>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "tests/actors/node/fake_cluster.hpp"

using namespace std::chrono_literals;
using namespace swarm;
using namespace swarm::fake_test;

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

TEST_CASE("a node that said it is stopping is no more among the alive nodes a program "
          "waits for, while its connection still answers") {
  fake_cluster c;
  wire_msg::heartbeat leaving;
  leaving.leaving = true;
  REQUIRE(c.net.send("worker-2", "head", leaving));
  REQUIRE(fake_cluster::eventually([&] { return c.head->alive_nodes().size() == 2; }));
  CHECK(c.head->wait_for_nodes(3, 0ms) == 2);
  CHECK(c.head->alive_nodes() == std::vector<std::string>{"head", "worker-1"});
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

TEST_CASE("a task a worker spills goes straight to the node its view shows can run it, "
          "not through the head") {
  fake_cluster c;
  // worker-1 knows worker-2 and what it has before it spills there.
  REQUIRE(fake_cluster::eventually([&] { return c.w1->alive_nodes().size() == 3; }));
  auto where_special = c.app.find_function<std::string()>("where_special").value();
  auto routes = std::make_shared<std::vector<std::string>>();
  auto routes_mtx = std::make_shared<std::mutex>();
  c.net.drop_if([=](auto& from, auto& to, auto& m) {
    std::lock_guard<std::mutex> g{*routes_mtx};
    if (auto* t = std::get_if<wire_msg::task_submit>(&m))
      routes->push_back(from + ">" + to + (t->placed ? " placed" : " to place"));
    return false;
  });
  CHECK(c.driver->submit(c.on("worker-1"), where_special).get(10s).value() == "worker-2");
  std::lock_guard<std::mutex> g{*routes_mtx};
  CHECK(*routes ==
        std::vector<std::string>{"head>worker-1 placed", "worker-1>worker-2 placed"});
}

TEST_CASE("a burst a worker spills waits straight at the only node that can run it, not "
          "through the head") {
  fake_cluster c;
  REQUIRE(fake_cluster::eventually([&] { return c.w1->alive_nodes().size() == 3; }));
  auto where = c.app.find_function<std::string()>("where").value();
  auto routes = std::make_shared<std::vector<std::string>>();
  auto routes_mtx = std::make_shared<std::mutex>();
  c.net.drop_if([=](auto& from, auto& to, auto& m) {
    std::lock_guard<std::mutex> g{*routes_mtx};
    if (from == "worker-1" && is<wire_msg::task_submit>(m)) routes->push_back(to);
    return false;
  });
  // Only worker-2 has the one "special" slot: worker-1's view shows room for one task,
  // and no other node that could run the rest.
  context on_w1{*c.w1, c.w1->new_owner_id()};
  task_options o;
  o.resources.set("special", 1);
  auto burst = [&] {
    std::vector<decltype(on_w1.submit(o, where))> fs;
    for (int i = 0; i < 6; ++i)
      fs.push_back(on_w1.submit(o, where));
    for (auto& f : fs)
      CHECK(f.get(10s).value() == "worker-2");
    std::lock_guard<std::mutex> g{*routes_mtx};
    return std::exchange(*routes, {});
  };
  CHECK(burst() == std::vector<std::string>(6, "worker-2"));
  // A burst when a node that could run it is not connected goes through the head: the
  // client test `a client's tasks placed by the head on a worker that is killed...` (a
  // process cluster) shows it. Cutting the worker-1/worker-2 link here would instead hit
  // issue 38's open defect: the head places the reruns back on the node worker-1 lost.
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

// A checkpointed actor on a worker (worker-1 first), restarted and its calls retried
// this often.
actor_options checkpointed_on_workers(uint32_t restarts, uint32_t retries) {
  actor_options o;
  o.resources.set("slot", 1);
  o.max_restarts = restarts;
  o.checkpoint_every = 1;
  o.max_task_retries = retries;
  return o;
}

// A checkpointed counter from 100 named `name`, created by the head's driver on
// worker-1.
actor_handle<counter> named_on_worker_1(fake_cluster& c, const std::string& name,
                                        uint32_t restarts, uint32_t retries) {
  auto o = checkpointed_on_workers(restarts, retries);
  o.name = name;
  auto a = c.driver->spawn(o, c.app.find_actor_type<counter>("counter").value(), 100);
  REQUIRE(a.call(&counter::node).get(10s).value() == "worker-1");
  return a;
}

// A checkpointed counter without a name, created by the head's driver on worker-1 and
// moved from 100 to 112 there.
actor_handle<counter> at_112_on_worker_1(fake_cluster& c) {
  auto counter_t = c.app.find_actor_type<counter>("counter").value();
  auto a = c.driver->spawn(checkpointed_on_workers(2, 2), counter_t, 100);
  REQUIRE(a.call(&counter::node).get(10s).value() == "worker-1");
  CHECK(a.call(&counter::add, 12).get(10s).value() == 112);
  return a;
}

// Holds what worker-1 sends, and what is sent to it, while `frozen` (frozen, or cut off).
void hold_worker_1(fake_cluster& c, std::atomic<bool>& frozen) {
  c.net.hold_if([&frozen](auto& from, auto& to, auto&) {
    return frozen && (from == "worker-1" || to == "worker-1");
  });
}

// Worker-1 dies: nothing more goes to or from it, and its connections to the nodes in
// `peers` close.
void kill_worker_1(fake_cluster& c, std::vector<std::string> peers = {"head"}) {
  c.net.drop_if(
      [](auto& from, auto& to, auto&) { return from == "worker-1" || to == "worker-1"; });
  for (auto& p : peers)
    c.net.disconnect(p, "worker-1", "killed by the test");
}

// Worker-1's row in the head's control store.
wire_msg::node_info worker_1_row(fake_cluster& c) {
  for (auto& row : c.head->control_table("node").value())
    if (auto* n = std::get_if<wire_msg::node_info>(&row); n && n->name == "worker-1")
      return *n;
  return {};
}

TEST_CASE(
    "a node back after the head found it dead stops the actors restarted elsewhere, "
    "and joins again as a new life") {
  fake_cluster c;
  auto a = at_112_on_worker_1(c);
  auto stale = c.head->address_of(a.record());
  REQUIRE(stale.node == "worker-1");
  auto first_life = worker_1_row(c).incarnation;
  std::atomic<bool> frozen{true};
  hold_worker_1(c, frozen);
  auto call = a.call(&counter::add, 1);
  // Found dead by its silence: the actor is restarted on worker-2 from 112.
  CHECK(call.get(10s).value() == 113);
  CHECK(a.call(&counter::node).get(10s).value() == "worker-2");
  // Thawed: its late messages arrive (the held call runs on the stale instance, whose
  // answer does not count), and the head tells it that life is over.
  frozen = false;
  c.net.release_held();
  CHECK(fake_cluster::eventually(
      [&] {
        auto row = worker_1_row(c);
        return row.alive && row.incarnation > first_life;
      },
      10s));
  CHECK(c.head->wait_for_nodes(3, 5s) == 3);
  CHECK(c.w2->wait_for_nodes(3, 5s) == 3); // worker-2 sees the new life too
  // The stale instance is gone: a call sent to it straight is refused there, and the
  // handle, asking the actor's owner, follows it to where it was restarted.
  auto rec = c.w2->actor_at(stale);
  REQUIRE(rec);
  actor_handle<counter> old{*c.w2, *rec};
  auto followed = old.call(&counter::add, 1).get(10s);
  INFO((followed ? std::string{"ok"} : followed.err().to_string()));
  REQUIRE(followed);
  // The live one went on from its own state.
  CHECK(*followed == 114);
  CHECK(old.call(&counter::node).get(10s).value() == "worker-2");
  CHECK(a.call(&counter::add, 1).get(10s).value() == 115);
  CHECK(a.call(&counter::node).get(10s).value() == "worker-2");
}

TEST_CASE("a node started again under its name never gives an actor the id an actor of "
          "its earlier life had, and a handle of that earlier actor follows it") {
  fake_cluster c;
  auto a = at_112_on_worker_1(c);
  auto before = c.head->address_of(a.record());
  // A handle of it on worker-2, as a value would carry it there.
  auto rec = c.w2->actor_at(before);
  REQUIRE(rec);
  actor_handle<counter> there{*c.w2, *rec};
  c.kill_and_restart_worker_1(0ms);
  CHECK(c.head->wait_for_nodes(3, 10s) == 3);
  // Restarted from its state on worker-2, where it fits while worker-1 is gone.
  CHECK(a.call(&counter::add, 1).get(10s).value() == 113);
  // Another actor on worker-1's new life: before, it was numbered from 1 again, the id
  // `a` had there, and calls meant for `a` could reach it.
  auto pinned = checkpointed_on_workers(2, 2);
  pinned.node = "worker-1";
  auto b =
      c.driver->spawn(pinned, c.app.find_actor_type<counter>("counter").value(), 500);
  REQUIRE(b.call(&counter::node).get(10s).value() == "worker-1");
  auto b_at = c.head->address_of(b.record());
  CHECK(b_at.node == "worker-1");
  CHECK(b_at.id != before.id);
  auto followed = there.call(&counter::add, 1).get(10s);
  INFO((followed ? std::string{"ok"} : followed.err().to_string()));
  REQUIRE(followed);
  CHECK(*followed == 114);
  CHECK(b.call(&counter::add, 1).get(10s).value() == 501);
}

TEST_CASE("a ref owned by an earlier life of a node started again under its name fails "
          "as its owner's death, and never reads an object of the new life") {
  fake_cluster c;
  using blob_refs = std::vector<object_ref<std::vector<uint8_t>>>;
  auto put = c.app.find_function<blob_refs(int, int)>("put_blobs").value();
  auto old = c.driver->submit(c.on("worker-1"), put, 1, 3).get(10s).value();
  REQUIRE(old.size() == 3);
  CHECK(old[0].get(10s).value().front() == 1);
  c.kill_and_restart_worker_1(0ms);
  CHECK(c.head->wait_for_nodes(3, 10s) == 3);
  // The new life puts objects as the first did, from its first worker.
  auto fresh = c.driver->submit(c.on("worker-1"), put, 2, 3).get(10s).value();
  REQUIRE(fresh.size() == 3);
  for (size_t i = 0; i < fresh.size(); ++i) {
    CHECK(fresh[i].get(10s).value().front() == 2);
    CHECK(fresh[i].id().to_string() != old[i].id().to_string());
  }
  // What the earlier life held went with it, unless a copy of it was read here before:
  // never the new life's blob.
  for (size_t i = 1; i < old.size(); ++i) {
    auto v = old[i].get(10s);
    INFO((v ? "a blob of " + std::to_string(int{v->front()}) : v.err().to_string()));
    if (v) {
      CHECK(v->front() == 1);
    } else {
      CHECK(v.err().code == errc::owner_died);
      CHECK(v.err().message.find("worker-1") != std::string::npos);
    }
  }
}

TEST_CASE("a call whose answer was lost with its actor's node, after the owner kept the "
          "state with its effect, is answered from that state and runs once") {
  fake_cluster c;
  auto a = at_112_on_worker_1(c);
  // A caller on worker-2, which is not the actor's owner: its answer goes out only once
  // the owner keeps the state with the call's effect.
  auto rec = c.w2->actor_at(c.head->address_of(a.record()));
  REQUIRE(rec);
  actor_handle<counter> there{*c.w2, *rec};
  // Only that answer: an answer of worker-1's new life (a refusal of a call sent there
  // before the head's news of the loss) comes through.
  auto held_one = std::make_shared<std::atomic<bool>>(false);
  c.net.hold_if([held_one](auto& from, auto& to, auto& m) {
    return from == "worker-1" && to == "worker-2" && is<wire_msg::task_result>(m) &&
           !held_one->exchange(true);
  });
  auto call = there.call(&counter::add, 10);
  REQUIRE(fake_cluster::eventually([&] { return c.net.stats().held == 1; }));
  // Its answer is lost with worker-1; worker-2 sends the call again to the actor
  // restarted from the state with its effect. Before, it ran again there: 132.
  c.kill_and_restart_worker_1(0ms);
  auto got = call.get(20s);
  INFO((got ? std::to_string(*got) : got.err().to_string()));
  REQUIRE(got);
  CHECK(*got == 122);
  CHECK(a.call(&counter::add, 1).get(10s).value() == 123);
  CHECK(there.call(&counter::add, 1).get(10s).value() == 124);
}

TEST_CASE("an actor restarted on a node that is lost before it answers, after join_wait, "
          "is placed again instead of given up") {
  fake_cluster c{0, [](cluster_config& cfg) { cfg.join_wait = 1000ms; }};
  auto a = at_112_on_worker_1(c);
  // Its restart on worker-2, the only node left that fits, is held there ...
  std::atomic<bool> frozen{false};
  c.net.hold_if([&frozen](auto& from, auto& to, auto& m) {
    return (frozen && (from == "worker-2" || to == "worker-2")) ||
           (from == "head" && to == "worker-2" && is<wire_msg::actor_create>(m));
  });
  kill_worker_1(c, {"head", "worker-2"});
  REQUIRE(fake_cluster::eventually([&] { return c.net.stats().held >= 1; }));
  // ... past join_wait, until worker-2 is found dead too: before, the restart gave up
  // and the actor died ('could not be restarted').
  std::this_thread::sleep_for(1100ms);
  frozen = true;
  REQUIRE(fake_cluster::eventually(
      [&] { return c.head->alive_nodes() == std::vector<std::string>{"head"}; }));
  auto call = a.call(&counter::add, 1);
  // Worker-2 comes back, a new life, and the actor is placed there.
  c.net.hold_if(nullptr);
  c.net.release_held();
  auto got = call.get(20s);
  INFO((got ? std::to_string(*got) : got.err().to_string()));
  REQUIRE(got);
  CHECK(*got == 113);
  CHECK(a.call(&counter::node).get(10s).value() == "worker-2");
}

TEST_CASE("a call made on a node cut off from its actor's owner, whose effect the owner "
          "refused, runs again where the actor was restarted") {
  fake_cluster c;
  auto counter_t = c.app.find_actor_type<counter>("counter").value();
  auto o = checkpointed_on_workers(2, 2);
  bool named = false;
  SUBCASE("a named actor, looked up there") {
    named = true;
  }
  SUBCASE("an actor without a name, its handle read there") {}
  if (named) o.name = "till";
  auto a = c.driver->spawn(o, counter_t, 100);
  REQUIRE(a.call(&counter::node).get(10s).value() == "worker-1");
  CHECK(a.call(&counter::add, 10).get(10s).value() == 110);
  // A handle on worker-1 itself reaches the instance there without the network.
  context local{*c.w1, c.w1->new_owner_id()};
  auto here =
      named
          ? local.find_actor(counter_t, "till").value()
          : actor_handle<counter>{*c.w1, *c.w1->actor_at(c.head->address_of(a.record()))};
  std::atomic<bool> frozen{true};
  hold_worker_1(c, frozen);
  // Found dead by its silence: the actor is restarted on worker-2 from 110.
  CHECK(a.call(&counter::add, 1).get(10s).value() == 111);
  REQUIRE(a.call(&counter::node).get(10s).value() == "worker-2");
  // The stale instance runs the local call at once; its answer waits for the owner to
  // keep the state, which the owner refuses once it hears: the call runs again where
  // the actor lives now, on the state that counts.
  auto stale = here.call(&counter::add, 5);
  CHECK_FALSE(stale.get(200ms));
  frozen = false;
  c.net.release_held();
  auto r = stale.get(15s);
  INFO((r ? std::string{"ok"} : r.err().to_string()));
  REQUIRE(r);
  CHECK(*r == 116);
  CHECK(here.call(&counter::node).get(10s).value() == "worker-2");
  CHECK(a.call(&counter::add, 1).get(10s).value() == 117);
}

TEST_CASE("a handle whose actor's node refuses it while the head finds that node alive "
          "tries again every so often, not in a loop, and its call goes through once the "
          "node can be reached") {
  fake_cluster c;
  auto o = checkpointed_on_workers(2, 2);
  o.node = "worker-2";
  auto a = c.driver->spawn(o, c.app.find_actor_type<counter>("counter").value(), 100);
  REQUIRE(a.call(&counter::node).get(10s).value() == "worker-2");
  // A handle on worker-1, without a name: it follows the actor through its owner.
  auto rec = c.w1->actor_at(c.head->address_of(a.record()));
  REQUIRE(rec);
  actor_handle<counter> there{*c.w1, *rec};
  CHECK(there.call(&counter::add, 1).get(10s).value() == 101);
  // Worker-1 and worker-2 cannot reach each other; both still reach the head.
  auto dials = std::make_shared<std::atomic<int>>(0);
  c.net.refuse_connections_if([dials](const std::string& x, const std::string& y) {
    bool apart =
        (x == "worker-1" && y == "worker-2") || (x == "worker-2" && y == "worker-1");
    if (apart) ++*dials;
    return apart;
  });
  c.net.disconnect("worker-1", "worker-2", "cut by the test");
  auto call = there.call(&counter::add, 1);
  CHECK_FALSE(call.get(1s));
  // The owner says the actor is where it was, on a node the head finds alive. Before,
  // the handle went back there at once, over and over: thousands of refused dials.
  INFO(dials->load() << " dials from worker-1 to worker-2 in 1 s");
  CHECK(dials->load() <= 15);
  c.net.refuse_connections_if(nullptr);
  CHECK(call.get(10s).value() == 102);
}

TEST_CASE("an actor pinned to a lost node waits for it and restarts there, and dies "
          "naming its pin when the node stays away past join_wait") {
  fake_cluster c{0, [](cluster_config& cfg) { cfg.join_wait = 1500ms; }};
  auto counter_t = c.app.find_actor_type<counter>("counter").value();
  auto o = checkpointed_on_workers(2, 2);
  o.node = "worker-1";
  auto a = c.driver->spawn(o, counter_t, 100);
  CHECK(a.call(&counter::add, 1).get(10s).value() == 101);
  std::atomic<bool> frozen{true};
  hold_worker_1(c, frozen);
  REQUIRE(fake_cluster::eventually([&] { return c.head->wait_for_nodes(3, 0ms) == 2; }));
  auto waiting = a.call(&counter::add, 1);
  CHECK_FALSE(waiting.get(300ms)); // not moved to worker-2: it waits
  frozen = false;
  c.net.release_held();
  CHECK(waiting.get(10s).value() == 102);
  CHECK(a.call(&counter::node).get(10s).value() == "worker-1");
  // Away for longer than join_wait: the actor dies, and says why.
  frozen = true;
  auto r = a.call(&counter::add, 1).get(15s);
  REQUIRE_FALSE(r);
  CHECK(r.err().code == errc::actor_died);
  CHECK(r.err().message.find("pinned to node 'worker-1'") != std::string::npos);
  frozen = false;
  c.net.release_held();
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
  kill_worker_1(c);
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
  auto a = c.driver->spawn(checkpointed_on_workers(1, 1), counter_t, 100);
  CHECK(a.call(&counter::node).get(10s).value() == "worker-1");
  CHECK(a.call(&counter::add, 12).get(10s).value() == 112); // saved with the owner
  // A call in flight when the node goes is sent again to the restarted actor, which
  // resumes from the last state its owner received (112: the one after this call is
  // held back in the call's result).
  c.net.hold_if([](auto& from, auto&, auto& m) {
    return from == "worker-1" &&
           (is<wire_msg::task_result>(m) || is<wire_msg::actor_checkpoint>(m));
  });
  auto in_flight = a.call(&counter::add, 1);
  REQUIRE(fake_cluster::eventually([&] { return c.net.stats().held >= 1; }));
  kill_worker_1(c);
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

TEST_CASE("the owner counts the answers to its calls only with the state that has "
          "their effect, however they reached the actor") {
  fake_cluster c;
  auto a = named_on_worker_1(c, "ledger", 2, 2);
  CHECK(a.call(&counter::add, 12).get(10s).value() == 112);
  auto found =
      c.driver->find_actor(c.app.find_actor_type<counter>("counter").value(), "ledger");
  REQUIRE(found);
  // States worker-1 sends apart from answers are lost on the way, as on a connection
  // whose control lane closed while its call lane brought the answers.
  c.net.drop_if([](auto& from, auto&, auto& m) {
    return from == "worker-1" && is<wire_msg::actor_checkpoint>(m);
  });
  CHECK(a.call(&counter::add, 1).get(10s).value() == 113);
  CHECK(found->call(&counter::add, 2).get(10s).value() == 115);
  // Worker-1 dies: the actor restarts on worker-2 from a state with both effects.
  kill_worker_1(c);
  CHECK(a.call(&counter::add, 0).get(10s).value() == 115);
  CHECK(a.call(&counter::node).get(10s).value() == "worker-2");
  CHECK(found->call(&counter::add, 0).get(10s).value() == 115);
}

TEST_CASE(
    "a handle found by name, or passed in a value, on another node follows its actor "
    "to where its owner restarted it, and its calls are retried as the creator's "
    "are") {
  fake_cluster c;
  auto counter_t = c.app.find_actor_type<counter>("counter").value();
  auto created = named_on_worker_1(c, "account", 1, 2);
  // Found by name from worker-2: a handle that did not create the actor.
  context there{*c.w2, c.w2->new_owner_id()};
  auto found = there.find_actor(counter_t, "account").value();
  CHECK(found.call(&counter::add, 5).get(10s).value() == 105);
  auto found_by_driver = c.driver->find_actor(counter_t, "account").value();
  // Passed in a value: what a handle becomes on the wire, read on worker-2.
  auto address = c.head->address_of(created.record());
  CHECK(address.name == "account");
  actor_handle<counter> passed{*c.w2, c.w2->actor_at(address).value()};
  CHECK(passed.call(&counter::add, 0).get(10s).value() == 105);
  // worker-1 dies; the head (the owner) restarts the actor on worker-2 from 105.
  kill_worker_1(c, {"head", "worker-2"});
  auto r = found.call(&counter::add, 1).get(20s);
  INFO((r ? std::string{"ok"} : r.err().to_string()));
  REQUIRE(r);
  CHECK(*r == 106);
  CHECK(found.call(&counter::node).get(10s).value() == "worker-2");
  CHECK(found_by_driver.call(&counter::add, 1).get(20s).value() == 107);
  CHECK(created.call(&counter::add, 1).get(10s).value() == 108);
  CHECK(passed.call(&counter::add, 1).get(20s).value() == 109);
}

TEST_CASE("handles found by name that ask where their actor is while it is being "
          "restarted wait for the restart, and send no call to where it was") {
  fake_cluster c;
  auto counter_t = c.app.find_actor_type<counter>("counter").value();
  auto created = named_on_worker_1(c, "vault", 1, 2);
  // Found on the head (the actor's owner) and on worker-2.
  auto on_head = c.driver->find_actor(counter_t, "vault").value();
  context there{*c.w2, c.w2->new_owner_id()};
  auto on_w2 = there.find_actor(counter_t, "vault").value();
  CHECK(on_w2.call(&counter::add, 0).get(10s).value() == 100);
  // The restart on worker-2 is held on the way for a second: the handles, losing
  // worker-1, ask where the actor is while it is being restarted, and what reaches
  // worker-1 is lost. They must wait for the restart, not send their calls to worker-1
  // (the head's name table answers "not yet" meanwhile). This guards the behaviour; the
  // race it closes shows only under load, so the test also passed before the fix.
  std::atomic<bool> holding{true};
  c.net.hold_if([&holding](auto&, auto& to, auto& m) {
    return holding && to == "worker-2" && is<wire_msg::actor_create>(m);
  });
  kill_worker_1(c, {"head", "worker-2"});
  auto from_head = on_head.call(&counter::add, 1);
  auto from_w2 = on_w2.call(&counter::add, 10);
  REQUIRE(fake_cluster::eventually([&] { return c.net.stats().held >= 1; }));
  std::this_thread::sleep_for(1s);
  holding = false;
  c.net.release_held();
  auto a = from_head.get(10s);
  auto b = from_w2.get(10s);
  INFO((a ? std::to_string(*a) : a.err().to_string()));
  INFO((b ? std::to_string(*b) : b.err().to_string()));
  REQUIRE(a);
  REQUIRE(b);
  CHECK(std::max(*a, *b) == 111);
  CHECK(created.call(&counter::add, 0).get(10s).value() == 111);
  CHECK(on_head.call(&counter::node).get(10s).value() == "worker-2");
}

TEST_CASE("a named actor another node created, restarted by it on the new life of the "
          "node it is pinned to, keeps its name: the head's row waits for the owner "
          "instead of taking the old place back") {
  fake_cluster c;
  auto counter_t = c.app.find_actor_type<counter>("counter").value();
  context there{*c.w2, c.w2->new_owner_id()};
  auto o = checkpointed_on_workers(1, 2);
  o.name = "till";
  o.node = "worker-1";
  auto created = there.spawn(o, counter_t, 100);
  CHECK(created.call(&counter::add, 1).get(10s).value() == 101);
  // The head's connection to worker-1 closes: the head finds worker-1 dead, and it
  // joins again as a new life, where worker-2 restarts the actor. Before, the head's row
  // of the actor, asking its own table, was told the old place (on a node alive again)
  // and took it back; worker-2's new place was then refused ("already taken") and calls
  // by name went to an instance gone with the old life: they never answered.
  c.net.disconnect("head", "worker-1", "reset by the test");
  // Restarted there: its creator's handle reaches it.
  CHECK(created.call(&counter::add, 1).get(10s).value() == 102);
  auto found = c.driver->find_actor(counter_t, "till");
  REQUIRE(found);
  auto r = found->call(&counter::add, 1).get(10s);
  INFO((r ? std::to_string(*r) : r.err().to_string()));
  REQUIRE(r);
  CHECK(*r == 103);
  CHECK(found->call(&counter::node).get(10s).value() == "worker-1");
}

TEST_CASE("a handle passed in a value of an actor without a name follows it to where its "
          "owner restarted it, asking the owner") {
  fake_cluster c;
  auto counter_t = c.app.find_actor_type<counter>("counter").value();
  auto created = c.driver->spawn(checkpointed_on_workers(1, 2), counter_t, 100);
  CHECK(created.call(&counter::node).get(10s).value() == "worker-1");
  auto address = c.head->address_of(created.record());
  CHECK(address.name.empty());
  CHECK(address.owner == "head");
  actor_handle<counter> passed{*c.w2, c.w2->actor_at(address).value()};
  CHECK(passed.call(&counter::add, 5).get(10s).value() == 105);
  kill_worker_1(c, {"head", "worker-2"});
  auto r = passed.call(&counter::add, 1).get(20s);
  INFO((r ? std::string{"ok"} : r.err().to_string()));
  REQUIRE(r);
  CHECK(*r == 106);
  CHECK(passed.call(&counter::node).get(10s).value() == "worker-2");
  CHECK(created.call(&counter::add, 1).get(10s).value() == 107);
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

TEST_CASE("a call from a node other than the actor's owner is answered once the owner "
          "keeps the state with its effect, and runs again where the owner restarted "
          "the actor when the owner never got that state") {
  fake_cluster c;
  auto counter_t = c.app.find_actor_type<counter>("counter").value();
  auto a = named_on_worker_1(c, "tally", 2, 2);
  context on_w2{*c.w2, c.w2->new_owner_id()};
  auto b = on_w2.find_actor(counter_t, "tally");
  REQUIRE(b);
  // The owner's answers to worker-1's saved states held back: worker-2's call runs, and
  // its answer waits for the owner's.
  std::atomic<bool> holding{true};
  c.net.hold_if([&holding](auto& from, auto& to, auto& m) {
    return holding && from == "head" && to == "worker-1" &&
           is<wire_msg::actor_checkpoint_taken>(m);
  });
  auto call = b->call(&counter::add, 5);
  CHECK(call.get(300ms).err().code == errc::timeout);
  // The owner's own call does not wait: its answer comes behind the state.
  CHECK(a.call(&counter::add, 1).get(10s).value() == 106);
  holding = false;
  c.net.hold_if(nullptr);
  c.net.release_held();
  CHECK(call.get(10s).value() == 105);
  // Worker-1 cut off from the head only: worker-2's call runs there, but the state with
  // its effect never reaches the owner, which finds worker-1 dead and restarts the actor
  // on worker-2 from 106. The call runs again there, once.
  std::atomic<bool> cut{true};
  c.net.hold_if([&cut](auto& from, auto& to, auto&) {
    return cut &&
           ((from == "worker-1" && to == "head") || (from == "head" && to == "worker-1"));
  });
  auto stale = c.head->address_of(a.record());
  auto first_life = worker_1_row(c).incarnation;
  auto again = b->call(&counter::add, 10);
  CHECK(again.get(10s).value() == 116);
  CHECK(a.call(&counter::node).get(10s).value() == "worker-2");
  cut = false;
  c.net.hold_if(nullptr);
  c.net.release_held();
  CHECK(a.call(&counter::add, 0).get(10s).value() == 116);
  CHECK(b->call(&counter::add, 0).get(10s).value() == 116);
  // Worker-1, back, stopped its instance: a call that still reaches it is redirected to
  // where the actor is now.
  REQUIRE(fake_cluster::eventually(
      [&] {
        auto row = worker_1_row(c);
        return row.alive && row.incarnation > first_life;
      },
      10s));
  auto rec = c.w2->actor_at(stale);
  REQUIRE(rec);
  actor_handle<counter> old{*c.w2, *rec};
  CHECK(old.call(&counter::add, 1).get(10s).value() == 117);
}
