// Nodes that join a running cluster by the head's address, with no row in its file.

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <string>

#include "tests/cluster/process_cluster.hpp"

using namespace std::chrono_literals;
using namespace swarm::cluster_test;

namespace {

// Whether `name` is a live node (not a client) of the cluster, as the head says.
bool alive_node(process_cluster& c, const std::string& name) {
  auto s = c.status();
  auto* n = s ? find_node(*s, name) : nullptr;
  return n && n->alive && !n->client;
}

} // namespace

TEST_CASE("a node that joins by the head's address runs work placed by the head, "
          "spilled by a worker of the file and pulled by a client") {
  process_cluster c{"", {"worker-1"}};
  auto nodes = c.start_alive({"head", "worker-1"});
  auto joined = c.join("joined-1", "joined-1.log", "special");
  REQUIRE(eventually(20s, [&] { return alive_node(c, "joined-1"); }));
  auto s = c.status().value();
  auto* row = find_node(s, "joined-1");
  REQUIRE(row);
  CHECK(row->address == "127.0.0.1");
  CHECK(row->port != 0);
  CHECK(row->total.get("special") == 1);

  test_client t{c, "client-join"};
  auto& app = t.app;
  auto& client = *t.rt;
  // Placed by the head: only the new node has the resource.
  CHECK(t.where_special() == "joined-1");
  swarm::task_options special;
  special.resources.set("special", 1);
  // Sent there by a worker of the file, which reaches it by its row of the node table.
  auto from = app.find_function<std::string()>("where_special").value();
  swarm::task_options on_worker;
  on_worker.node = "worker-1";
  CHECK(client.submit(on_worker, from).get(20s).value() == "joined-1");
  // A result too large to travel inline stays there; the client pulls it.
  auto blob = app.find_function<std::vector<uint8_t>(int)>("blob").value();
  auto big = client.submit(special, blob, 1 << 20).get(20s);
  REQUIRE(big);
  CHECK(big->size() == size_t{1} << 20);
  CHECK(big->at(12345) == uint8_t(12345 & 0xff));
  // The tools find it by the head's table: its lists, and its stop.
  auto tasks = swarm::list_node(c.cfg, "joined-1", {{"timeline", 0}}, 5s);
  REQUIRE(tasks);
  CHECK(tasks->front().total >= 3);
  REQUIRE(swarm::stop_cluster(c.cfg, "joined-1", 5s));
  CHECK(joined->wait_exit(20s) == 0);
}

TEST_CASE("a node joining under the name of a live node, or of a node of the file, or "
          "at a worker's address is refused, naming why, the live node serves on") {
  process_cluster c{"", {"worker-1", "worker-2"}};
  auto nodes = c.start_alive({"head", "worker-1"});
  auto first = c.join("joined-1", "joined-1.log");
  REQUIRE(eventually(20s, [&] { return alive_node(c, "joined-1"); }));
  auto port = find_node(c.status().value(), "joined-1")->port;

  auto second = c.join("joined-1", "second.log");
  CHECK(second->wait_exit(20s) == 1);
  auto log = second->log();
  CHECK(log.find("refused node 'joined-1': node 'joined-1' is alive in cluster "
                 "'processes' (at 127.0.0.1:" +
                 std::to_string(port) + "): a second node under its name is refused") !=
        std::string::npos);
  // worker-2, in the file, has not started: it would be reached at the file's address.
  auto file_name = c.join("worker-2", "file-name.log");
  CHECK(file_name->wait_exit(20s) == 1);
  CHECK(file_name->log().find("'worker-2' is a node of cluster 'processes'") !=
        std::string::npos);
  // A worker's address is not the head's: the worker says so, naming the head's.
  swarm::join_options at_worker;
  auto& w1 = *c.cfg.find("worker-1").value();
  at_worker.head.address = w1.address;
  at_worker.head.port = w1.port;
  at_worker.head.secret = c.cfg.secret;
  at_worker.node.name = "joined-2";
  auto refused = swarm::join_cluster(at_worker);
  REQUIRE_FALSE(refused);
  CHECK_MESSAGE(refused.err().message.find(
                    "node 'worker-1' is not the head: join by the head's address (" +
                    c.cfg.head().address + ":" + std::to_string(c.cfg.head().port) +
                    ")") != std::string::npos,
                refused.err().message);

  CHECK(first->wait_exit(0ms) == -1);
  CHECK(alive_node(c, "joined-1"));
  CHECK(find_node(c.status().value(), "joined-1")->port == port);
}

TEST_CASE("a node that joined by address and died can join again under its name, as a "
          "new node whose work runs") {
  process_cluster c{"", {}};
  auto nodes = c.start_alive({"head"});
  auto joined = c.join("joined-1", "joined-1.log", "special");
  REQUIRE(eventually(20s, [&] { return alive_node(c, "joined-1"); }));
  joined->kill_now();
  // Found dead, then dropped from the table: the name is free for a new node.
  REQUIRE(eventually(20s, [&] {
    auto s = c.status();
    return s && !find_node(*s, "joined-1");
  }));
  auto again = c.join("joined-1", "again.log", "special");
  REQUIRE(eventually(20s, [&] { return alive_node(c, "joined-1"); }));
  CHECK(test_client{c, "client-again"}.where_special() == "joined-1");
  auto s = c.status().value();
  CHECK(std::count_if(s.nodes.begin(), s.nodes.end(),
                      [](auto& n) { return n.name == "joined-1"; }) == 1);
}
