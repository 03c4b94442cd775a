// Task priorities across node processes: a high-priority task runs on a busy node before
// the lower ones queued there, whichever node sent it.

#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include "tests/cluster/three_nodes.hpp"

using namespace std::chrono_literals;
using swarm::cluster_test::eventually;
using swarm::cluster_test::three_nodes;

namespace {

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in{path};
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    out.push_back(line);
  return out;
}

} // namespace

TEST_CASE(
    "a high-priority task sent to a busy node by another node runs there before the "
    "lower ones queued before it") {
  three_nodes c;
  auto mark =
      c.app.find_function<int(const std::string&, const std::string&, int)>("mark_nap")
          .value();
  auto mark_on =
      c.app
          .find_function<swarm::object_ref<int>(const std::string&, const std::string&,
                                                int, const std::string&, int)>(
              "mark_nap_on")
          .value();
  auto order = c.dir + "/order";
  // worker-1 has one CPU: low0 runs, low1-3 wait there (queued or pipelined).
  std::vector<swarm::object_ref<int>> done;
  done.push_back(c.rt->submit(c.on("worker-1"), mark, order, "low0", 600));
  REQUIRE(eventually(10s, [&] { return lines_of(order).size() == 1; }));
  for (auto label : {"low1", "low2", "low3"})
    done.push_back(c.rt->submit(c.on("worker-1"), mark, order, label, 50));
  // Bounded: the lows reach worker-1 over loopback well within this.
  std::this_thread::sleep_for(200ms);
  // Sent from worker-2, at priority 10.
  auto high = c.rt->submit(c.on("worker-2"), mark_on, order, "high", 10, "worker-1", 10);
  REQUIRE_MESSAGE(high.get(20s), "the high-priority task");
  for (auto& d : done)
    REQUIRE(d.get(20s));
  CHECK(lines_of(order) ==
        std::vector<std::string>{"low0", "high", "low1", "low2", "low3"});
}

TEST_CASE("a latency-critical call and task reach another node and answer beside a "
          "thousand plain calls queued to it, which all run once") {
  three_nodes c;
  auto cls = c.app.find_actor_type<swarm::cluster_test::counter>("counter").value();
  swarm::actor_options o;
  o.node = "worker-1";
  auto plain = c.rt->spawn(o, cls, 0);
  auto urgent = plain.latency_critical();
  std::vector<swarm::object_ref<int>> queued;
  for (int i = 0; i < 1000; ++i)
    queued.push_back(plain.call(&swarm::cluster_test::counter::add, 1));
  auto fast = urgent.call(&swarm::cluster_test::counter::add, 1000);
  auto pid = c.app.find_function<int()>("pid").value();
  swarm::task_options critical = c.on("worker-1");
  critical.latency_critical = true;
  auto where = c.rt->submit(critical, pid);
  auto got = fast.get(20s);
  REQUIRE_MESSAGE(got, got.err().message);
  CHECK(*got >= 1000);
  CHECK(where.get(20s).value() == c.w1->pid());
  for (auto& q : queued)
    REQUIRE(q.get(20s));
  CHECK(plain.call(&swarm::cluster_test::counter::add, 0).get(20s).value() == 2000);
}
