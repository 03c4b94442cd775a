// Placement groups across real node processes: reserved by the head's global scheduler.

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "tests/cluster/three_nodes.hpp"

using namespace std::chrono_literals;
using swarm::cluster_test::three_nodes;

namespace {

// A bundle of one CPU and one 'slot': only the worker processes have slots.
swarm::resource_set slot() {
  return swarm::resource_set::cpus(1).set("slot", 1);
}

swarm::placement_group_options gang(std::vector<swarm::resource_set> bundles,
                                    swarm::placement_strategy s) {
  swarm::placement_group_options o;
  o.bundles = std::move(bundles);
  o.strategy = s;
  return o;
}

} // namespace

TEST_CASE("a gang spread over two node processes runs work in its bundles there, a gang "
          "that cannot fit waits, then fits when the first is removed") {
  three_nodes c;
  auto where = c.app.find_function<std::string()>("where").value();
  auto first = c.rt->create_placement_group(
      gang({slot(), slot()}, swarm::placement_strategy::strict_spread));
  REQUIRE(first);
  auto nodes = first->wait(20s).value();
  std::sort(nodes.begin(), nodes.end());
  CHECK(nodes == std::vector<std::string>{"worker-1", "worker-2"});
  auto placed = first->wait(1s).value();
  for (uint32_t i = 0; i < 2; ++i) {
    swarm::task_options in;
    in.bundle = first->bundle(i);
    CHECK(c.rt->submit(in, where).get(20s).value() == placed[i]);
  }
  auto second =
      c.rt->create_placement_group(gang({slot()}, swarm::placement_strategy::pack));
  REQUIRE(second);
  CHECK(second->wait(500ms).err().code == swarm::errc::timeout);
  REQUIRE(c.rt->remove_placement_group(*first));
  auto now = second->wait(20s).value();
  REQUIRE(now.size() == 1);
  CHECK(now[0].rfind("worker-", 0) == 0);
}

TEST_CASE("a task on a worker node reserves a placement group through the head and runs "
          "work in its bundles") {
  three_nodes c;
  auto in_group =
      c.app.find_function<std::vector<std::string>(int, int)>("in_group").value();
  auto ran = c.rt->submit(c.on("worker-1"), in_group, 2, 20000).get(30s).value();
  std::sort(ran.begin(), ran.end());
  CHECK(ran == std::vector<std::string>{"worker-1", "worker-2"});
  auto too_many = c.rt->submit(c.on("worker-2"), in_group, 3, 500).get(30s);
  REQUIRE_FALSE(too_many);
  CHECK(too_many.err().message.find("not placed") != std::string::npos);
}

TEST_CASE("a placement group with a bundle on a node that dies is placed again as a "
          "whole on the nodes left") {
  three_nodes c;
  // Bundle 0 needs a slot (a worker), bundle 1 any CPU on another node.
  auto g = c.rt->create_placement_group(gang({slot(), swarm::resource_set::cpus(1)},
                                             swarm::placement_strategy::strict_spread));
  REQUIRE(g);
  auto before = g->wait(20s).value();
  REQUIRE(before.size() == 2);
  auto doomed = before[0];
  (doomed == "worker-1" ? c.w1 : c.w2)->kill_now();
  std::vector<std::string> after;
  for (int i = 0; i < 100; ++i) {
    after = g->wait(20s).value();
    if (after[0] != doomed) break;
    std::this_thread::sleep_for(100ms);
  }
  REQUIRE(after.size() == 2);
  CHECK(after[0] != doomed);
  CHECK(after[0].rfind("worker-", 0) == 0);
  CHECK(after[1] != doomed);
  CHECK(after[1] != after[0]);
}
