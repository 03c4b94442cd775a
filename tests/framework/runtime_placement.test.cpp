// Placement groups on an embedded node: the whole cluster is this node.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "framework/swarm.hpp"

using namespace std::chrono_literals;

namespace {

struct fixture {
  swarm::application app;
  swarm::task_fn<int(int)> inc = app.function("inc", [](int x) { return x + 1; });
};

swarm::runtime_config two_cpus() {
  swarm::runtime_config cfg;
  cfg.cpus = 2;
  return cfg;
}

swarm::placement_group_options gang(std::vector<double> cpus,
                                    swarm::placement_strategy s) {
  swarm::placement_group_options o;
  for (auto n : cpus)
    o.bundles.push_back(swarm::resource_set::cpus(n));
  o.strategy = s;
  return o;
}

} // namespace

TEST_CASE("a placement group on one node: work runs in its bundles, a gang that cannot "
          "fit waits, then fits once the first is removed") {
  fixture f;
  swarm::runtime rt{f.app, two_cpus()};
  auto first =
      rt.create_placement_group(gang({1, 1}, swarm::placement_strategy::strict_pack));
  REQUIRE(first);
  CHECK(first->wait(5s).value() == std::vector<std::string>{"local", "local"});
  swarm::task_options in;
  in.bundle = first->bundle(1);
  CHECK(rt.submit(in, f.inc, 1).get(5s).value() == 2);

  auto second = rt.create_placement_group(gang({2}, swarm::placement_strategy::pack));
  REQUIRE(second);
  CHECK(second->wait(200ms).err().code == swarm::errc::timeout);
  swarm::task_options early;
  early.bundle = second->bundle(0);
  auto not_yet = rt.submit(early, f.inc, 1).get(5s);
  REQUIRE_FALSE(not_yet);
  CHECK(not_yet.err().message.find("not placed yet") != std::string::npos);
  REQUIRE(rt.remove_placement_group(*first));
  CHECK(second->wait(5s).value() == std::vector<std::string>{"local"});
  CHECK(rt.submit(early, f.inc, 2).get(5s).value() == 3);
}

TEST_CASE("placement groups refuse what could never fit, and work that does not fit its "
          "bundle") {
  fixture f;
  swarm::runtime rt{f.app, two_cpus()};
  CHECK(
      rt.create_placement_group(gang({3}, swarm::placement_strategy::pack)).err().code ==
      swarm::errc::infeasible);
  CHECK(rt.create_placement_group(gang({}, swarm::placement_strategy::pack)).err().code ==
        swarm::errc::invalid_argument);
  auto g = rt.create_placement_group(gang({0.5}, swarm::placement_strategy::pack));
  REQUIRE(g);
  REQUIRE(g->wait(5s));
  swarm::task_options whole;
  whole.bundle = g->bundle(0);
  auto too_big = rt.submit(whole, f.inc, 1).get(5s);
  REQUIRE_FALSE(too_big);
  CHECK(too_big.err().code == swarm::errc::infeasible);
  swarm::task_options half = whole;
  half.resources = swarm::resource_set::cpus(0.5);
  CHECK(rt.submit(half, f.inc, 1).get(5s).value() == 2);
  half.bundle = g->bundle(3);
  CHECK(rt.submit(half, f.inc, 1).get(5s).err().message.find("not a bundle 3") !=
        std::string::npos);
  // Two bundles on distinct nodes: one node never holds them.
  auto spread =
      rt.create_placement_group(gang({1, 1}, swarm::placement_strategy::strict_spread));
  REQUIRE(spread);
  CHECK(spread->wait(200ms).err().code == swarm::errc::timeout);
  REQUIRE(rt.remove_placement_group(*spread));
  CHECK(spread->wait(1s).err().message.find("does not exist") != std::string::npos);
}
