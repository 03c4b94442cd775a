// Pipelines whose stages run on real node processes.

#include <doctest/doctest.h>

#include <thread>
#include <vector>

#include "tests/cluster/three_nodes.hpp"

using namespace std::chrono_literals;
using swarm::cluster_test::plus_one;
using swarm::cluster_test::three_nodes;

TEST_CASE("a pipeline across three node processes keeps its order, and a stage replica "
          "whose node is SIGKILLed mid-stream loses nothing") {
  three_nodes c;
  auto stage = c.app.find_actor_type<plus_one>("plus_one").value();
  swarm::stage_options spread;
  spread.replicas = 2;
  spread.nodes = {"worker-1", "worker-2"};
  swarm::stage_options on_head;
  on_head.nodes = {"head"};
  auto run = swarm::pipeline<int>{}
                 .then(stage, &plus_one::add, on_head)
                 .then(stage, &plus_one::add, spread)
                 .then(stage, &plus_one::add, on_head)
                 .start(*c.rt, 16);
  std::thread source{[&] {
    for (int i = 0; i < 300; ++i)
      REQUIRE(run.push(i, 60s));
    run.close();
  }};
  std::vector<int> got;
  while (auto out = run.next(60s).value()) {
    got.push_back(*out);
    if (got.size() == 100) c.w1->kill_now();
  }
  source.join();
  REQUIRE(got.size() == 300);
  for (int i = 0; i < 300; ++i)
    CHECK(got[static_cast<size_t>(i)] == i + 3);
}
