// Device buffers across node processes: the workers' GPUs are simulated in host memory
// (gpu_backend = "host"), so the path runs where there is no GPU.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/cluster/three_nodes.hpp"

using namespace std::chrono_literals;
using swarm::cluster_test::three_nodes;

TEST_CASE("a device buffer made on one node's GPU reaches a task on another node's GPU "
          "through the bulk path, and the driver reads it on the host") {
  three_nodes c{"", "", "gpus = 1\ngpu_backend = \"host\"\n"};
  auto fill = c.app.find_function<swarm::device_buffer(int)>("device_fill").value();
  auto read = c.app
                  .find_function<swarm::cluster_test::device_seen(swarm::device_buffer)>(
                      "device_read")
                  .value();
  auto on = [&](const std::string& node) {
    auto o = c.on(node);
    o.resources.set("GPU", 1);
    return o;
  };
  const int n = 100000; // 400 KB: above the inline threshold, an object of the store
  std::vector<int> expected(n);
  for (int i = 0; i < n; ++i)
    expected[static_cast<size_t>(i)] = i + 1;

  auto buf = c.rt->submit(on("worker-1"), fill, n);
  auto there = c.rt->submit(on("worker-2"), read, buf).get(30s).value();
  CHECK(there.node == "worker-2");
  CHECK_FALSE(there.arrived_on_device); // it came as bytes, and went to the device there
  CHECK(there.values == expected);
  auto same = c.rt->submit(on("worker-1"), read, buf).get(30s).value();
  CHECK(same.arrived_on_device); // on its own node it never left the device
  CHECK(same.values == expected);

  auto at_driver = buf.get(30s).value();
  CHECK_FALSE(at_driver.on_device());
  CHECK(at_driver.to_host_as<int>().value() == expected);
  // The head has no GPU: a task there asking for one is refused at once.
  auto nowhere = c.rt->submit(on("head"), read, buf).get(30s);
  REQUIRE_FALSE(nowhere);
  CHECK(nowhere.err().code == swarm::errc::infeasible);
}
