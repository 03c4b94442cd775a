// The embedded runtime starting a local cluster of node processes by itself.

#include <doctest/doctest.h>

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "tests/cluster/test_app.hpp"

using namespace std::chrono_literals;
using namespace swarm::cluster_test;

namespace {

swarm::task_options on(const std::string& node) {
  swarm::task_options o;
  o.node = node;
  return o;
}

bool process_exists(int pid) {
  return ::kill(pid, 0) == 0 || errno != ESRCH;
}

} // namespace

TEST_CASE("the runtime starts a local 3-node cluster by itself and stops it when it goes") {
  swarm::application app;
  register_all(app);
  swarm::local_cluster_config lc;
  lc.nodes = 3;
  lc.cpus_per_node = 1;
  lc.worker_resources.set("special", 1);
  std::set<int> pids;
  {
    swarm::runtime rt{app, lc};
    REQUIRE(rt.cluster() != nullptr);
    CHECK(rt.cluster()->nodes.size() == 3);
    CHECK(swarm::cluster_status(*rt.cluster(), 5s).value().alive() == 3);

    auto pid = app.find_function<int()>("pid").value();
    auto add = app.find_function<int(int, int)>("add").value();
    for (auto node : {"head", "worker-1", "worker-2"})
      pids.insert(rt.submit(on(node), pid).get(10s).value());
    CHECK(pids.size() == 3);
    CHECK(pids.count(::getpid()) == 1);
    // Futures cross between the forked nodes, and resources place work.
    auto a = rt.submit(on("worker-1"), add, 20, 1);
    CHECK(rt.submit(on("worker-2"), add, a, 21).get(10s).value() == 42);
    swarm::task_options special;
    special.resources.set("special", 1);
    CHECK(rt.submit(special, pid).get(10s).value() != ::getpid());
  }
  // The workers were reaped when the runtime went.
  pids.erase(::getpid());
  for (int p : pids)
    CHECK_FALSE(process_exists(p));
}

TEST_CASE("a local cluster refuses to fork from a process that already runs threads") {
  swarm::application app;
  register_all(app);
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  std::thread other{[&] {
    std::unique_lock<std::mutex> g{m};
    cv.wait_for(g, 30s, [&] { return done; });
  }};
  swarm::local_cluster_config lc;
  lc.nodes = 2;
  std::string why;
  try {
    swarm::runtime rt{app, lc};
  } catch (const swarm::failure& f) {
    why = f.err().message;
  }
  {
    std::lock_guard<std::mutex> g{m};
    done = true;
  }
  cv.notify_all();
  other.join();
  CHECK(why.find("single-threaded") != std::string::npos);
}

TEST_CASE("a local cluster's settings are checked before anything is started") {
  swarm::local_cluster_config lc;
  lc.nodes = 0;
  auto none = swarm::make_local_cluster(lc);
  REQUIRE_FALSE(none);
  CHECK(none.err().message.find("nodes") != std::string::npos);
  lc.nodes = 2;
  lc.gcs_shards = 0;
  auto shards = swarm::make_local_cluster(lc);
  REQUIRE_FALSE(shards);
  CHECK(shards.err().message.find("gcs_shards") != std::string::npos);
  lc.gcs_shards = 2;
  auto ok = swarm::make_local_cluster(lc).value();
  CHECK(ok.nodes.size() == 2);
  CHECK(ok.nodes[1].port != ok.nodes[0].port);
  CHECK(ok.secret.size() >= 16);
}
