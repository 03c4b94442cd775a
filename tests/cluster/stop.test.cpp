// Stops that stop: a node process ends within cluster.stop_timeout_ms after whatever it
// served, or, when its stop hangs, exits anyway and names the step it hung in.

#include <doctest/doctest.h>

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/cluster/process_cluster.hpp"

using namespace std::chrono_literals;
using namespace swarm::cluster_test;


TEST_CASE("a head stops within its deadline after serving a client's key-value, status "
          "and list requests") {
  process_cluster c{"stop_timeout_ms = 15000\n", {"worker-1"}};
  auto nodes = c.start_alive({"head", "worker-1"});
  auto& head = nodes[0];
  auto& worker = nodes[1];
  {
    swarm::application app;
    register_all(app);
    swarm::runtime client{app, client_of(c.cfg, "client-kv")};
    REQUIRE(client.kv_put("k", {1, 2, 3}));
    auto got = client.kv_get("k");
    REQUIRE(got);
    REQUIRE(got->has_value());
    CHECK(**got == std::vector<uint8_t>{1, 2, 3});
    REQUIRE(client.kv_erase("k"));
    auto add = app.find_function<int(int, int)>("add").value();
    CHECK(client.submit(add, 2, 3).get(10s).value() == 5);
  }
  REQUIRE(c.status());
  REQUIRE(swarm::list_cluster(c.cfg, "tasks", "", 2s));
  REQUIRE(swarm::stop_cluster(c.cfg, "", 5s));
  // Before the fix the head hung in its actor system's shutdown for good: the endpoint's
  // thread that served the key-value request kept a hold on the system's logger.
  CHECK(head->wait_exit(12s) == 0);
  CHECK(worker->wait_exit(12s) == 0);
  CHECK(head->log().find("did not finish") == std::string::npos);
}

TEST_CASE("a node whose stop hangs on a task that does not end exits at its deadline, "
          "naming the step it hangs in") {
  process_cluster c{"stop_timeout_ms = 1000\n", {"worker-1"}};
  auto nodes = c.start_alive({"head", "worker-1"});
  auto& head = nodes[0];
  auto& worker = nodes[1];
  auto mark = c.tmp.path + "/napping";
  {
    swarm::application app;
    register_all(app);
    swarm::runtime client{app, client_of(c.cfg, "client-nap")};
    auto nap = app.find_function<int(const std::string&, int)>("nap_pid").value();
    swarm::task_options on_worker;
    on_worker.node = "worker-1";
    on_worker.max_retries = 0;
    auto ref = client.submit(on_worker, nap, mark, 60'000);
    REQUIRE(eventually(10s, [&] { return std::filesystem::exists(mark); }));
    ::kill(worker->pid(), SIGTERM);
    // It waits for the task a second, then exits with code 2.
    CHECK(worker->wait_exit(10s) == 2);
    auto log = worker->log();
    CHECK(log.find("the stop did not finish within 1000 ms") != std::string::npos);
    CHECK(log.find("it hangs stopping the node's actors and the tasks still running") !=
          std::string::npos);
    CHECK_FALSE(ref.get(10s));
  }
  REQUIRE(swarm::stop_cluster(c.cfg, "", 5s));
  CHECK(head->wait_exit(12s) == 0);
}

TEST_CASE("a node stopped with work queued gives that work back: its owner places it on "
          "the other nodes and every task succeeds") {
  process_cluster c{"stop_timeout_ms = 15000\n", {"worker-1", "worker-2"}};
  auto nodes = c.start_alive({"head", "worker-1", "worker-2"});
  auto& w1 = nodes[1];
  swarm::application app;
  register_all(app);
  swarm::runtime client{app, client_of(c.cfg, "client-stop-node")};
  // An actor the client made on worker-1, hosted there for it (it holds no CPU).
  swarm::actor_options there;
  there.node = "worker-1";
  auto a = client.spawn(there, app.find_actor_type<counter>("counter").value(), 1);
  REQUIRE(a.call(&counter::add, 1).get(10s));
  swarm::task_options retried;
  retried.max_retries = 3;
  // Three nodes of one CPU each: most of the 15 tasks wait in a node's queue.
  auto refs = c.naps(client, app, 15, 400, retried);
  auto started = [&] {
    for (int i = 0; i < 15; ++i)
      if (std::filesystem::exists(c.nap_file(i))) return true;
    return false;
  };
  REQUIRE(eventually(10s, started));
  REQUIRE(swarm::stop_cluster(c.cfg, "worker-1", 5s));
  // What it did is in its row: `swarm stop --node` prints it.
  auto report = swarm::wait_stopped(c.cfg, "worker-1", 20s);
  REQUIRE_MESSAGE(report, report.err().message);
  CHECK(report->find("gives back") != std::string::npos);
  CHECK(report->find("task(s) queued or running here") != std::string::npos);
  CHECK(report->find("stops 1 actor(s) it hosts for other nodes") != std::string::npos);
  CHECK(report->find("result(s) over to their owners' copies") != std::string::npos);
  CHECK(w1->wait_exit(20s) == 0);
  CHECK(process_cluster::succeeded(refs) == 15);
}

TEST_CASE("an actor on a stopped node sends its owner the state of its calls since its "
          "last checkpoint first, and goes on from there on another node") {
  process_cluster c{"", {"worker-1", "worker-2"}};
  auto nodes = c.start_alive({"head", "worker-1", "worker-2"});
  swarm::application app;
  register_all(app);
  swarm::runtime client{app, client_of(c.cfg, "client-final-checkpoint")};
  swarm::actor_options o;
  o.node = "worker-1";
  o.move_if_node_lost = true;
  o.max_restarts = 1;
  o.checkpoint_every = 100; // none of its calls below reaches a checkpoint of its own
  auto a = client.spawn(o, app.find_actor_type<counter>("counter").value(), 10);
  for (int i = 1; i <= 3; ++i)
    REQUIRE(a.call(&counter::add, 1).get(10s).value() == 10 + i);
  REQUIRE(swarm::stop_cluster(c.cfg, "worker-1", 5s));
  auto report = swarm::wait_stopped(c.cfg, "worker-1", 20s);
  REQUIRE_MESSAGE(report, report.err().message);
  CHECK(report->find("stops 1 actor(s) it hosts for other nodes (1 sent their owners "
                     "their state first)") != std::string::npos);
  CHECK(nodes[1]->wait_exit(20s) == 0);
  // Restarted on worker-2 or the head, from the state of its third call.
  CHECK(a.call(&counter::add, 1).get(20s).value() == 14);
  CHECK(a.call(&counter::where).get(10s).value() != nodes[1]->pid());
}

TEST_CASE("an actor on a drained node moves there without using one of its restarts: "
          "when its next node is killed, it restarts once more") {
  process_cluster c{"", {}};
  auto head = c.start_alive({"head"});
  // Three nodes with one "special" each: the actor, which holds one, fits each alone.
  std::vector<std::unique_ptr<node_process>> movers;
  for (auto& name : {"mover-1", "mover-2", "mover-3"})
    movers.push_back(c.join(name, std::string{name} + ".log", "special"));
  auto alive = [&](const std::string& name) {
    auto s = c.status();
    auto* n = s ? find_node(*s, name) : nullptr;
    return n && n->alive;
  };
  for (auto& name : {"mover-1", "mover-2", "mover-3"})
    REQUIRE(eventually(20s, [&] { return alive(name); }));
  test_client t{c, "client-drain-move"};
  swarm::actor_options o;
  o.resources = swarm::resource_set{};
  o.resources.set("special", 1);
  o.max_restarts = 1;
  o.max_task_retries = 2; // a call sent as its node is killed goes to the next instance
  auto a = t.rt->spawn(o, t.app.find_actor_type<counter>("counter").value(), 10);
  auto first = a.call(&counter::node).get(20s).value();
  REQUIRE(first.rfind("mover-", 0) == 0);
  REQUIRE(swarm::stop_cluster(c.cfg, first, 5s));
  auto report = swarm::wait_stopped(c.cfg, first, 20s);
  REQUIRE_MESSAGE(report, report.err().message);
  CHECK(report->find("stops 1 actor(s) it hosts for other nodes") != std::string::npos);
  auto second = a.call(&counter::node).get(20s);
  REQUIRE_MESSAGE(second, second.err().message);
  CHECK(*second != first);
  // Its one restart is still there: before, the drain had used it, and the actor died
  // with this node.
  auto& next = movers[static_cast<size_t>(second->back() - '1')];
  ::kill(next->pid(), SIGKILL);
  auto third = a.call(&counter::node).get(30s);
  REQUIRE_MESSAGE(third, third.err().message);
  CHECK(*third != first);
  CHECK(*third != *second);
  // Now its restart is used: one more loss ends it.
  ::kill(movers[static_cast<size_t>(third->back() - '1')]->pid(), SIGKILL);
  auto fourth = a.call(&counter::node).get(30s);
  REQUIRE_FALSE(fourth);
  CHECK_MESSAGE(fourth.err().message.find("restarts used up (max_restarts = 1)") !=
                    std::string::npos,
                fourth.err().message);
  REQUIRE(swarm::stop_cluster(c.cfg, "", 5s));
}
