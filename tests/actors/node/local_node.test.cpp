#include <doctest/doctest.h>

#include <caf/all.hpp>

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include "actors/control_store/gcs_shard.hpp"
#include "actors/node/local_node.hpp"
#include "framework/detail/supervisor_actor.hpp"
#include "framework/swarm.hpp"

using namespace std::chrono_literals;

namespace {

struct named : swarm::actor {
  int ping() { return 7; }
};

caf::actor wait_for_new_child(swarm::actors::local_node& node, const std::string& id,
                              const caf::actor& old) {
  for (int i = 0; i < 500; ++i) {
    auto now = swarm::detail::which_child(node.system(), node.supervisor(), id, 1s);
    if (now && *now != old) return *now;
    std::this_thread::sleep_for(5ms);
  }
  return nullptr;
}

} // namespace

TEST_CASE(
    "a crashed scheduler is restarted by the node supervisor and tasks keep running") {
  swarm::application app;
  auto inc = app.function("inc", [](int x) { return x + 1; });
  swarm::runtime_config cfg;
  cfg.cpus = 2;
  swarm::actors::local_node node{app, cfg};
  swarm::context ctx{node, node.new_owner_id()};
  REQUIRE(ctx.submit(inc, 1).get(5s).value() == 2);
  auto old =
      swarm::detail::which_child(node.system(), node.supervisor(), "local_scheduler");
  REQUIRE(old);
  caf::anon_send_exit(*old, caf::exit_reason::kill);
  // Submitted while the scheduler may be down: held, then run by its successor.
  auto during = ctx.submit(inc, 10);
  REQUIRE(wait_for_new_child(node, "local_scheduler", *old));
  CHECK(during.get(10s).value() == 11);
  CHECK(ctx.submit(inc, 20).get(10s).value() == 21);
}

TEST_CASE(
    "a crashed control-store shard restarts the parts after it and keeps names working") {
  swarm::application app;
  auto named_t = app.actor_type<named>("named");
  auto inc = app.function("inc", [](int x) { return x + 1; });
  swarm::runtime_config cfg;
  cfg.cpus = 2;
  swarm::actors::local_node node{app, cfg};
  swarm::context ctx{node, node.new_owner_id()};
  auto old_gcs =
      swarm::detail::which_child(node.system(), node.supervisor(), "gcs_shard");
  auto old_sched =
      swarm::detail::which_child(node.system(), node.supervisor(), "local_scheduler");
  REQUIRE(old_gcs);
  REQUIRE(old_sched);
  caf::anon_send_exit(*old_gcs, caf::exit_reason::kill);
  REQUIRE(wait_for_new_child(node, "gcs_shard", *old_gcs));
  // rest_for_one: the scheduler, started after the shard, was restarted too.
  REQUIRE(wait_for_new_child(node, "local_scheduler", *old_sched));
  swarm::actor_options o;
  o.name = "after";
  auto a = ctx.spawn(o, named_t);
  auto found = ctx.find_actor(named_t, "after");
  REQUIRE(found);
  CHECK(found->call(&named::ping).get(5s).value() == 7);
  CHECK(ctx.submit(inc, 1).get(5s).value() == 2);
}

TEST_CASE("named actors are spread over control-store shards by key hash") {
  swarm::application app;
  auto named_t = app.actor_type<named>("named");
  swarm::runtime_config cfg;
  cfg.cpus = 1;
  cfg.gcs_shards = 4;
  swarm::actors::local_node node{app, cfg};
  swarm::context ctx{node, node.new_owner_id()};
  std::vector<size_t> per_shard(4);
  std::vector<swarm::actor_handle<named>> keep;
  for (int i = 0; i < 16; ++i) {
    swarm::actor_options o;
    o.name = "actor-" + std::to_string(i);
    keep.push_back(ctx.spawn(o, named_t));
    ++per_shard[swarm::actors::shard_of(o.name, 4)];
  }
  // The names land on more than one shard, and each is found through its own shard.
  CHECK(std::count_if(per_shard.begin(), per_shard.end(),
                      [](size_t n) { return n > 0; }) > 1);
  for (int i = 0; i < 16; ++i)
    CHECK(ctx.find_actor(named_t, "actor-" + std::to_string(i)));
  CHECK(node.stats().named_actors == 16);
  for (size_t i = 0; i < 4; ++i)
    CHECK(swarm::detail::which_child(node.system(), node.supervisor(),
                                     "gcs_shard-" + std::to_string(i)));
  swarm::runtime_config bad;
  bad.gcs_shards = 0;
  CHECK_THROWS_AS(swarm::actors::local_node(app, bad), swarm::failure);
}

TEST_CASE(
    "a GPU worker that dies is restarted under the node supervisor: buffers it held "
    "read as lost, new ones work, and the node's metrics count the restart") {
  swarm::application app;
  auto make = app.function("make", [](swarm::context& ctx, int n) {
    return ctx.to_device(std::vector<int>(static_cast<size_t>(n), 7)).value();
  });
  auto read = app.function("read", [](swarm::context& ctx, swarm::device_buffer b) {
    auto here = ctx.on_device(b);
    if (!here) throw swarm::failure{here.err()};
    return here->to_host_as<int>().value();
  });
  swarm::runtime_config cfg;
  cfg.cpus = 2;
  cfg.gpu_backend = "host";
  cfg.extra_resources.set("GPU", 1);
  swarm::actors::local_node node{app, cfg};
  swarm::context ctx{node, node.new_owner_id()};
  swarm::task_options gpu;
  gpu.resources.set("GPU", 1);
  auto before = ctx.submit(gpu, make, 100);
  REQUIRE(before.get(10s));

  auto gpus = swarm::detail::which_child(node.system(), node.supervisor(), "gpu_workers");
  REQUIRE(gpus);
  auto old = swarm::detail::which_child(node.system(), *gpus, "gpu_worker-0");
  REQUIRE(old);
  caf::anon_send_exit(*old, caf::exit_reason::kill);
  caf::actor fresh;
  for (int i = 0; i < 500 && !fresh; ++i) {
    auto now = swarm::detail::which_child(node.system(), *gpus, "gpu_worker-0", 1s);
    if (now && *now != *old)
      fresh = *now;
    else
      std::this_thread::sleep_for(5ms);
  }
  REQUIRE(fresh);
  // The node's metrics: its GPU worker's restarts, and whether it is up.
  auto gpu_metrics = [&] {
    swarm::actors::metric_set m{"local"};
    node.collect(m);
    std::pair<double, double> out{-1, -1};
    for (auto& f : m.take()) {
      if (f.name == "swarm_gpu_worker_restarts_total")
        out.first = f.metric.at(0).counter.value;
      if (f.name == "swarm_gpu_up") {
        out.second = f.metric.at(0).gauge.value;
        // Named by its identity as well as its index, which CUDA_VISIBLE_DEVICES moves.
        auto& labels = f.metric.at(0).label;
        CHECK(std::any_of(labels.begin(), labels.end(), [](const auto& l) {
          return l.name == "uuid" && l.value == "host-0";
        }));
      }
    }
    return out;
  };
  // The supervisor has the fresh child before the node hears it is up (bounded).
  for (int i = 0; i < 500 && gpu_metrics() != std::pair<double, double>{1, 1}; ++i)
    std::this_thread::sleep_for(10ms);
  CHECK(gpu_metrics() == std::pair<double, double>{1, 1});

  auto lost = ctx.submit(gpu, read, before).get(10s);
  REQUIRE_FALSE(lost);
  CHECK_MESSAGE(lost.err().message.find("lost") != std::string::npos, lost.err().message);
  CHECK(ctx.submit(gpu, read, ctx.submit(gpu, make, 10)).get(10s).value() ==
        std::vector<int>(10, 7));
}
