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
