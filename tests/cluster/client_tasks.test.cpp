// A client's work when a worker dies: the client owns its tasks, the head places them.

#include <doctest/doctest.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "tests/cluster/process_cluster.hpp"

using namespace std::chrono_literals;
using namespace swarm::cluster_test;

TEST_CASE("a client's tasks placed by the head on a worker that is killed run again "
          "elsewhere, and every one completes") {
  process_cluster c{"stop_timeout_ms = 15000\n", {"worker-1", "worker-2"}};
  auto nodes = c.start_alive({"head", "worker-1", "worker-2"});
  auto& w1 = nodes[1];
  swarm::application app;
  register_all(app);
  swarm::runtime client{app, client_of(c.cfg, "client-kill")};
  auto refs = c.naps(client, app, 15, 300);
  // Bounded: a task runs on worker-1 (it wrote its pid), then worker-1 dies.
  auto on_w1 = [&] {
    for (int i = 0; i < 15; ++i) {
      int pid = 0;
      std::ifstream{c.nap_file(i)} >> pid;
      if (pid == w1->pid()) return true;
    }
    return false;
  };
  REQUIRE(eventually(10s, on_w1));
  w1->kill_now();
  CHECK(process_cluster::succeeded(refs) == 15);
}
