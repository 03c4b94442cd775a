// The head's autoscaler with real node processes: the local provider starts
// swarm_test_node joining by the head's address; the command provider runs shell
// commands.

#include <doctest/doctest.h>

#include <signal.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "tests/cluster/process_cluster.hpp"

using namespace std::chrono_literals;
using namespace swarm::cluster_test;

namespace {

// A node type "special": one CPU and one "special", at most one node.
const std::string special_type = "[[autoscaler.node_type]]\nname = \"special\"\n"
                                 "cpus = 1\nresources = { special = 1 }\nmax = 1\n";

// The local provider starting swarm_test_node with one "special"; idle after `idle_ms`.
std::string local_special(int idle_ms) {
  return "[autoscaler]\nstart_command = 'exec \"" SWARM_TEST_NODE
         "\" --address \"$SWARM_ADDRESS\" --node \"$SWARM_NODE_NAME\" --resource "
         "special --node-type \"$SWARM_NODE_TYPE\"'\n" +
         special_type + "idle_timeout_ms = " + std::to_string(idle_ms) + "\n";
}

swarm::task_options special() {
  swarm::task_options o;
  o.resources.set("special", 1);
  return o;
}

size_t lines_of(const std::string& path) {
  std::ifstream in{path};
  size_t n = 0;
  for (std::string line; std::getline(in, line);)
    ++n;
  return n;
}

} // namespace

TEST_CASE("the autoscaler starts a node for work that fits no live node, and stops it "
          "once it is idle") {
  process_cluster c{local_special(1500), {}};
  auto nodes = c.start_alive({"head"});
  test_client t{c, "client-scale"};
  auto& client = *t.rt;
  auto name = t.app.find_function<std::string()>("node_name").value();
  std::vector<swarm::object_ref<std::string>> refs;
  for (int i = 0; i < 3; ++i)
    refs.push_back(client.submit(special(), name));
  std::string started;
  for (auto& r : refs) {
    auto where = r.get(60s);
    REQUIRE(where);
    CHECK(where->rfind("special-", 0) == 0);
    if (started.empty()) started = *where;
    CHECK(*where == started); // one node: the type's max
  }
  auto s = c.status().value();
  REQUIRE(find_node(s, started));
  CHECK(find_node(s, started)->total.get("special") == 1);
  REQUIRE(s.launches.size() == 1);
  CHECK(s.launches[0].node == started);
  CHECK(s.launches[0].why.find("fits no live node") != std::string::npos);
  // Idle for 1.5 s: stopped; its process ends, and it leaves the head's table.
  REQUIRE(eventually(30s, [&] {
    auto now = c.status();
    return now && !find_node(*now, started) && now->launches.empty();
  }));
  CHECK(nodes[0]->log().find("autoscaler: stopping node '" + started + "': idle for") !=
        std::string::npos);
}

TEST_CASE("a failing provider command is reported with its output and retried with a "
          "growing back-off, the work that only its type fits then fails saying why") {
  process_cluster c{"[autoscaler]\nprovider = \"command\"\nretry_after_ms = 100\n"
                    "start_command = 'echo try >> @DIR@/launches; echo no quota left; "
                    "exit 3'\nstop_command = 'true'\n" +
                        special_type,
                    {}};
  auto nodes = c.start_alive({"head"});
  test_client t{c, "client-fail"};
  auto& client = *t.rt;
  auto name = t.app.find_function<std::string()>("node_name").value();
  auto r = client.submit(special(), name).get(60s);
  REQUIRE_FALSE(r);
  CHECK(r.err().message.find("the autoscaler gave up on node type 'special' after 5 "
                             "failed launches in a row") != std::string::npos);
  CHECK(r.err().message.find("exited with code 3; its output: no quota left") !=
        std::string::npos);
  // One launch at a time (max 1), 5 in all: no more once it gave up.
  CHECK(lines_of(c.tmp.path + "/launches") == 5);
  auto log = nodes[0]->log();
  CHECK(log.find("did not start (1 in a row)") != std::string::npos);
  CHECK(log.find("did not start (5 in a row)") != std::string::npos);
  auto s = c.status().value();
  REQUIRE(s.launches.size() == 1);
  CHECK(s.launches[0].state == "failed");
}

TEST_CASE("a node the autoscaler started that is found dead while frozen is still its "
          "own, neither replaced nor forgotten, once thawed") {
  process_cluster c{local_special(60000), {}};
  auto nodes = c.start_alive({"head"});
  test_client t{c, "client-frozen"};
  auto& client = *t.rt;
  auto name = t.app.find_function<std::string()>("node_name").value();
  auto pid = t.app.find_function<int()>("pid").value();
  auto started = client.submit(special(), name).get(60s).value();
  auto node_pid = client.submit(special(), pid).get(20s).value();
  auto alive = [&](bool want) {
    auto s = c.status();
    auto* n = s ? find_node(*s, started) : nullptr;
    return s && (n && n->alive) == want;
  };
  ::kill(node_pid, SIGSTOP);
  REQUIRE(eventually(20s, [&] { return alive(false); }));
  ::kill(node_pid, SIGCONT);
  REQUIRE(eventually(20s, [&] { return alive(true); }));
  auto s = c.status().value();
  REQUIRE(s.launches.size() == 1);
  CHECK(s.launches[0].node == started);
  CHECK(s.launches[0].state == "up");
  auto log = nodes[0]->log();
  CHECK(log.find("autoscaler: starting node") == log.rfind("autoscaler: starting node"));
  CHECK(log.find("is gone") == std::string::npos);
}

TEST_CASE("a head started again while a node its autoscaler started runs adopts that "
          "node, and stops it once idle") {
  process_cluster c{local_special(2000), {}};
  auto nodes = c.start_alive({"head"});
  std::string started;
  int node_pid = 0;
  {
    test_client t{c, "client-adopt"};
    auto name = t.app.find_function<std::string()>("node_name").value();
    auto pid = t.app.find_function<int()>("pid").value();
    started = t.rt->submit(special(), name).get(60s).value();
    node_pid = t.rt->submit(special(), pid).get(20s).value();
  }
  // Killed: its autoscaler stops nothing, and the node, its child, runs on.
  nodes[0]->kill_now();
  nodes[0] = c.start("head", "head-again.log");
  auto adopted = [&] {
    auto s = c.status();
    return s && s->launches.size() == 1 && s->launches[0].node == started &&
           s->launches[0].state == "up";
  };
  CHECK_MESSAGE(eventually(30s, adopted), nodes[0]->log());
  auto log = nodes[0]->log();
  CHECK(log.find("autoscaler: adopted node '" + started +
                 "' of type 'special', started before the head started") !=
        std::string::npos);
  // Idle for 2 s: the new head's autoscaler stops it, as its own.
  CHECK_MESSAGE(eventually(30s,
                           [&] {
                             auto s = c.status();
                             return s && !find_node(*s, started) && s->launches.empty();
                           }),
                nodes[0]->log());
  CHECK(nodes[0]->log().find("autoscaler: stopping node '" + started + "': idle for") !=
        std::string::npos);
  ::kill(node_pid, SIGKILL); // if it outlived a failed check: no child of this test
}
