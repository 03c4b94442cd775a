// A head whose control store persists (`gcs_dir`) is killed and started again: it finds
// its node and job tables. The head and a worker are node processes; this test process
// is the driver, a node of its own.

#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "tests/cluster/node_process.hpp"
#include "tests/cluster/test_app.hpp"

using namespace std::chrono_literals;
using namespace swarm::cluster_test;

namespace {

std::string cluster_file(const std::string& gcs_dir) {
  auto node = [](const char* name, const char* role) {
    return std::string{"[[node]]\nname = \""} + name +
           "\"\naddress = \"127.0.0.1\"\nport = " + std::to_string(free_port()) +
           "\nrole = \"" + role + "\"\ncpus = 1\n";
  };
  return "[cluster]\nname = \"restart\"\nsecret = \"the-secret-of-the-restart-test\"\n"
         "gcs_shards = 2\ngcs_dir = \"" +
         gcs_dir + "\"\nheartbeat_ms = 100\nnode_timeout_ms = 1000\n" +
         node("head", "head") + node("worker-1", "worker") + node("driver", "worker");
}

// Polls `done` every 50 ms for at most `limit`; whether it came true.
bool eventually(std::chrono::milliseconds limit, const std::function<bool()>& done) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(50ms);
  }
  return true;
}

const swarm::node_status* find_node(const swarm::cluster_state& s, const std::string& n) {
  auto i =
      std::find_if(s.nodes.begin(), s.nodes.end(), [&](auto& x) { return x.name == n; });
  return i == s.nodes.end() ? nullptr : &*i;
}

} // namespace

TEST_CASE("a restarted head finds its tables") {
  char tmpl[] = "/tmp/swarm-head-restart-XXXXXX";
  std::string dir = ::mkdtemp(tmpl);
  auto config = dir + "/cluster.toml";
  std::ofstream{config} << cluster_file(dir + "/gcs");
  auto cfg = swarm::load_cluster_config(config).value();
  auto start = [&](const std::string& name, const std::string& log) {
    return std::make_unique<node_process>(
        SWARM_TEST_NODE, std::vector<std::string>{"--config", config, "--node", name},
        dir + "/" + log);
  };
  auto status = [&] { return swarm::cluster_status(cfg, 2s); };

  auto head = start("head", "head.log");
  auto worker = start("worker-1", "worker-1.log");
  swarm::application app;
  register_all(app);
  // Joins the head (retrying while it starts) and enters a running job.
  auto rt = std::make_unique<swarm::runtime>(app, cfg, "driver");
  REQUIRE(eventually(20s, [&] {
    auto s = status();
    return s && s->alive() == 3 && s->jobs.size() == 1;
  }));
  auto pid = app.find_function<int()>("pid").value();
  swarm::task_options on_worker;
  on_worker.node = "worker-1";
  REQUIRE(rt->submit(on_worker, pid).get(10s).value() == worker->pid());
  auto before = status().value();
  auto job = before.jobs.at(0);
  CHECK(job.driver == "driver");
  CHECK(job.pid == static_cast<uint32_t>(::getpid()));

  // The head dies without a chance to flush anything; the worker dies while it is down.
  head->kill_now();
  worker->kill_now();
  head = start("head", "head-2.log");
  REQUIRE(eventually(20s, [&] { return status().has_value(); }));
  auto after = status().value();
  REQUIRE(after.jobs.size() == 1);
  CHECK(after.jobs[0].id == job.id);
  CHECK(after.jobs[0].driver == "driver");
  CHECK(after.jobs[0].pid == job.pid);
  CHECK(after.jobs[0].started_ms == job.started_ms);
  CHECK(after.jobs[0].running);
  auto* w = find_node(after, "worker-1");
  REQUIRE(w);
  CHECK_FALSE(w->alive); // restored, not heard from since the restart
  CHECK(w->total.get("CPU") == 1);
  auto* h = find_node(after, "head");
  REQUIRE(h);
  CHECK(h->alive);
  CHECK(find_node(after, "driver"));
  CHECK(std::filesystem::exists(dir + "/gcs/head/shard-0/log"));
  CHECK(std::filesystem::exists(dir + "/gcs/head/shard-1/log"));
  CHECK(head->log().find("damaged") == std::string::npos);

  // The driver rejoins the new head by itself, and work goes there again.
  REQUIRE(eventually(20s, [&] {
    auto s = status();
    auto* d = s ? find_node(*s, "driver") : nullptr;
    return d && d->alive;
  }));
  swarm::task_options on_head;
  on_head.node = "head";
  CHECK(rt->submit(on_head, pid).get(10s).value() == head->pid());
  rt.reset();
  head->stop();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}
