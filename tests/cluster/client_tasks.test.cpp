// A client's work when a worker dies: the client owns its tasks, the head places them.

#include <doctest/doctest.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "tests/cluster/process_cluster.hpp"

using namespace std::chrono_literals;
using namespace swarm::cluster_test;

namespace {

// Whether one of the first `n` naps of `c` ran in process `pid` (it wrote its pid).
bool ran_in(process_cluster& c, int n, int pid) {
  for (int i = 0; i < n; ++i) {
    int written = 0;
    std::ifstream{c.nap_file(i)} >> written;
    if (written == pid) return true;
  }
  return false;
}

} // namespace

TEST_CASE("a client's 200 tasks placed by the head on a worker that is killed run again "
          "elsewhere, and every one completes") {
  process_cluster c{"stop_timeout_ms = 15000\n", {"worker-1", "worker-2"}};
  auto nodes = c.start_alive({"head", "worker-1", "worker-2"});
  auto& w1 = nodes[1];
  swarm::application app;
  register_all(app);
  swarm::runtime client{app, client_of(c.cfg, "client-kill")};
  auto refs = c.naps(client, app, 200, 20);
  // Bounded: a task runs on worker-1, then worker-1 dies.
  REQUIRE(eventually(10s, [&] { return ran_in(c, 200, w1->pid()); }));
  w1->kill_now();
  CHECK(process_cluster::succeeded(refs) == 200);
}

TEST_CASE("a client's 200 tasks complete when a worker is frozen past node_timeout: what "
          "it held runs elsewhere, and thawed it joins again") {
  process_cluster c{"stop_timeout_ms = 15000\n", {"worker-1", "worker-2"}};
  auto nodes = c.start_alive({"head", "worker-1", "worker-2"});
  auto& w1 = nodes[1];
  swarm::application app;
  register_all(app);
  swarm::runtime client{app, client_of(c.cfg, "client-freeze")};
  auto refs = c.naps(client, app, 200, 20);
  REQUIRE(eventually(10s, [&] { return ran_in(c, 200, w1->pid()); }));
  w1->freeze();
  // Found dead after node_timeout (1000 ms): its tasks run on the others meanwhile.
  auto dead = [&] {
    auto s = c.status();
    auto* n = s ? find_node(*s, "worker-1") : nullptr;
    return n && !n->alive;
  };
  CHECK(eventually(10s, dead));
  w1->thaw();
  CHECK(process_cluster::succeeded(refs) == 200);
  // Fenced as the life found dead, it joins again as a new one.
  CHECK(eventually(20s, [&] {
    auto s = c.status();
    auto* n = s ? find_node(*s, "worker-1") : nullptr;
    return n && n->alive;
  }));
}
