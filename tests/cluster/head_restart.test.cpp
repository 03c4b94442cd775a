// A head is killed and started again and finds its tables: from its disk (`gcs_dir`), or
// from the other members of its control store's chains (`gcs_replication`). The head and
// the workers are node processes; this test process is the driver, a node of its own.

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
#include <vector>

#include "tests/cluster/process_cluster.hpp"

using namespace std::chrono_literals;
using namespace swarm::cluster_test;

namespace {

// A cluster of the head and `workers` (the driver last), persisted in `gcs_dir` unless
// `persisted` is false, its control store replicated `replication` times.
struct restart_cluster : process_cluster {
  restart_cluster(bool persisted, int replication,
                  const std::vector<std::string>& workers)
      : process_cluster(
            "gcs_shards = 2\ngcs_replication = " + std::to_string(replication) + "\n" +
                (persisted ? "gcs_dir = \"@DIR@/gcs\"\n" : ""),
            workers) {}
};

} // namespace

TEST_CASE("a restarted head finds its tables") {
  restart_cluster c{true, 1, {"worker-1", "driver"}};
  auto& dir = c.tmp.path;
  auto& cfg = c.cfg;
  auto start = [&](const std::string& name, const std::string& log) {
    return c.start(name, log);
  };
  auto status = [&] { return c.status(); };

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
}

TEST_CASE("a killed control-store replica loses nothing, and a restarted head finds its "
          "tables and a durable object whose owner died in the chain") {
  // No gcs_dir: the tables live only in memory, on the chain's three members.
  restart_cluster c{false, 3, {"worker-1", "worker-2", "driver"}};
  auto& cfg = c.cfg;
  auto start = [&](const std::string& name, const std::string& log) {
    return c.start(name, log);
  };
  auto status = [&] { return c.status(); };
  auto head = start("head", "head.log");
  auto w1 = start("worker-1", "worker-1.log");
  auto w2 = start("worker-2", "worker-2.log");
  swarm::application app;
  register_all(app);
  auto rt = std::make_unique<swarm::runtime>(app, cfg, "driver");
  REQUIRE(eventually(20s, [&] {
    auto s = status();
    return s && s->alive() == 4 && s->jobs.size() == 1;
  }));
  auto value = [](int i) {
    return std::vector<uint8_t>(100 + i, static_cast<uint8_t>(i));
  };
  auto put = [&](int i) { return rt->kv_put("key-" + std::to_string(i), value(i)); };
  for (int i = 0; i < 50; ++i)
    REQUIRE(put(i));
  // A durable object put by a task on worker-1, which dies next with its owner.
  auto durable =
      app.find_function<std::string(const std::string&, int)>("put_durable_here").value();
  swarm::task_options on_w1;
  on_w1.node = "worker-1";
  REQUIRE(rt->submit(on_w1, durable, std::string{"weights"}, 5).get(10s).value() ==
          "worker-1");

  // The chain is head -> worker-1 -> worker-2: its middle dies, and every write made
  // while the head finds out still lands (the driver takes worker-1's place at the tail).
  w1->kill_now();
  auto longest = 0ms;
  for (int i = 50; i < 100; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    REQUIRE(put(i));
    longest = std::max(longest, std::chrono::duration_cast<std::chrono::milliseconds>(
                                    std::chrono::steady_clock::now() - t0));
  }
  MESSAGE("longest write while a chain member died: " << longest.count() << " ms");
  CHECK(head->log().find("control-store chain: head -> worker-2 -> driver") !=
        std::string::npos);
  for (int i = 0; i < 100; ++i)
    CHECK(rt->kv_get("key-" + std::to_string(i)).value() == value(i));
  CHECK_FALSE(rt->kv_get("key-100").value());

  // The head dies with everything in memory; its successor recovers it from the chain.
  auto job = status().value().jobs.at(0);
  head->kill_now();
  head = start("head", "head-2.log");
  REQUIRE(eventually(20s, [&] {
    auto got = rt->kv_get("key-99");
    return got && *got == value(99);
  }));
  for (int i = 0; i < 100; ++i)
    CHECK(rt->kv_get("key-" + std::to_string(i)).value() == value(i));
  CHECK(rt->get_durable<std::vector<int>>("weights").value() == std::vector<int>(5, 5));
  CHECK(rt->get_durable<int>("weights").err().code == swarm::errc::type_mismatch);
  REQUIRE(rt->kv_erase("key-0"));
  CHECK_FALSE(rt->kv_get("key-0").value());
  auto after = status().value();
  REQUIRE(after.jobs.size() == 1);
  CHECK(after.jobs[0].id == job.id);
  CHECK(after.jobs[0].started_ms == job.started_ms);
  CHECK(head->log().find("recovered") != std::string::npos);
  rt.reset();
  head->stop();
}

TEST_CASE("a durable object and an actor's durable checkpoints outlive a restart of the "
          "whole cluster") {
  restart_cluster c{true, 1, {"worker-1", "driver"}};
  auto head = c.start("head", "head.log");
  auto worker = c.start("worker-1", "worker-1.log");
  swarm::application app;
  register_all(app);
  auto counter_t = app.find_actor_type<counter>("counter").value();
  swarm::actor_options tally;
  tally.node = "worker-1";
  tally.name = "tally";
  tally.checkpoint_every = 1;
  tally.durable_checkpoints = true;
  {
    swarm::runtime rt{app, c.cfg, "driver"};
    REQUIRE(eventually(20s, [&] {
      auto s = c.status();
      return s && s->alive() == 3;
    }));
    REQUIRE(rt.put_durable("model", std::vector<int>{1, 2, 3}));
    auto a = rt.spawn(tally, counter_t, 100);
    CHECK(a.call(&counter::add, 5).get(10s).value() == 105);
    CHECK(a.call(&counter::add, 1).get(10s).value() == 106);
    // Unnamed, or never saving, it has nothing to keep them under.
    swarm::actor_options unnamed = tally;
    unnamed.name.clear();
    auto refused = rt.spawn(unnamed, counter_t, 0).call(&counter::add, 1).get(10s);
    REQUIRE_FALSE(refused);
    CHECK(refused.err().message.find("durable_checkpoints needs a name") !=
          std::string::npos);
  }
  // Every process of the cluster goes, the head without a chance to flush anything.
  worker->kill_now();
  head->kill_now();
  head = c.start("head", "head-2.log");
  worker = c.start("worker-1", "worker-1-2.log");
  swarm::runtime rt{app, c.cfg, "driver"};
  REQUIRE(eventually(20s, [&] {
    auto s = c.status();
    return s && s->alive() == 3;
  }));
  CHECK(rt.get_durable<std::vector<int>>("model").value() == std::vector<int>{1, 2, 3});
  auto again = rt.spawn(tally, counter_t, 0); // starts from the last state, not from 0
  CHECK(again.call(&counter::add, 1).get(10s).value() == 107);
}

TEST_CASE("a restarted head with gcs_dir lists each node once, and every live worker "
          "alive again, through more restarts") {
  restart_cluster c{true, 1, {"worker-1", "worker-2"}};
  auto head = c.start("head", "head.log");
  auto w1 = c.start("worker-1", "worker-1.log");
  auto w2 = c.start("worker-2", "worker-2.log");
  auto each_once_alive = [&] {
    auto s = c.status();
    if (!s || s->nodes.size() != 3) return false;
    for (auto& name : {"head", "worker-1", "worker-2"})
      if (std::count_if(s->nodes.begin(), s->nodes.end(),
                        [&](auto& n) { return n.name == name && n.alive; }) != 1)
        return false;
    return true;
  };
  REQUIRE(eventually(20s, each_once_alive));
  for (int i = 0; i < 2; ++i) {
    head->kill_now();
    head = c.start("head", "head-" + std::to_string(i + 2) + ".log");
    // The workers never went down: they rejoin the new head by themselves.
    CHECK(eventually(20s, each_once_alive));
  }
  auto s = c.status().value();
  CHECK(s.nodes.size() == 3);
  CHECK(s.alive() == 3);
}
