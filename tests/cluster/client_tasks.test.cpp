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

// The head and two workers; a client's 200 naps of 20 ms placed over them, one of which
// ran on worker-1 already (it wrote its pid).
struct naps_placed {
  process_cluster c{"stop_timeout_ms = 15000\n", {"worker-1", "worker-2"}};
  std::vector<std::unique_ptr<node_process>> nodes{
      c.start_alive({"head", "worker-1", "worker-2"})};
  test_client client;
  std::vector<swarm::object_ref<int>> refs;

  explicit naps_placed(const std::string& name) : client{c, name} {
    refs = c.naps(*client.rt, client.app, 200, 20);
    REQUIRE(eventually(10s, [&] { return ran_on(worker_1().pid()); }));
  }

  node_process& worker_1() { return *nodes[1]; }

  bool ran_on(int pid) {
    for (int i = 0; i < 200; ++i) {
      int written = 0;
      std::ifstream{c.nap_file(i)} >> written;
      if (written == pid) return true;
    }
    return false;
  }

  // Whether the head finds worker-1 alive (`alive`) or dead.
  bool worker_1_is(bool alive) {
    auto s = c.status();
    auto* n = s ? find_node(*s, "worker-1") : nullptr;
    return n && n->alive == alive;
  }
};

} // namespace

TEST_CASE("a client's 200 tasks placed by the head on a worker that is killed run again "
          "elsewhere, and every one completes") {
  naps_placed p{"client-kill"};
  p.worker_1().kill_now();
  CHECK(process_cluster::succeeded(p.refs) == 200);
}

TEST_CASE("a client's 200 tasks complete when a worker is frozen past node_timeout: what "
          "it held runs elsewhere, and thawed it joins again") {
  naps_placed p{"client-freeze"};
  p.worker_1().freeze();
  // Found dead after node_timeout (1000 ms): its tasks run on the others meanwhile.
  CHECK(eventually(10s, [&] { return p.worker_1_is(false); }));
  p.worker_1().thaw();
  CHECK(process_cluster::succeeded(p.refs) == 200);
  // Fenced as the life found dead, it joins again as a new one.
  CHECK(eventually(20s, [&] { return p.worker_1_is(true); }));
}
