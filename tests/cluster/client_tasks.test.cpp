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
  auto head = c.start("head", "head.log");
  auto w1 = c.start("worker-1", "worker-1.log");
  auto w2 = c.start("worker-2", "worker-2.log");
  REQUIRE(eventually(20s, [&] {
    auto s = c.status();
    return s && s->alive() == 3;
  }));
  swarm::application app;
  register_all(app);
  swarm::runtime client{app, client_of(c.cfg, "client-kill")};
  auto nap = app.find_function<int(const std::string&, int)>("nap_pid").value();
  std::vector<swarm::object_ref<int>> refs;
  for (int i = 0; i < 15; ++i)
    refs.push_back(client.submit(nap, c.tmp.path + "/nap-" + std::to_string(i), 300));
  // Bounded: a task runs on worker-1 (it wrote its pid), then worker-1 dies.
  auto on_w1 = [&] {
    for (int i = 0; i < 15; ++i) {
      int pid = 0;
      std::ifstream{c.tmp.path + "/nap-" + std::to_string(i)} >> pid;
      if (pid == w1->pid()) return true;
    }
    return false;
  };
  REQUIRE(eventually(10s, on_w1));
  w1->kill_now();
  int done = 0;
  for (auto& r : refs) {
    auto v = r.get(30s);
    if (!v) MESSAGE(v.err().to_string());
    done += v.has_value();
  }
  CHECK(done == 15);
}
