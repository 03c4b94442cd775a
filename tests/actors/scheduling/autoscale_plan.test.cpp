#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "actors/scheduling/autoscale_plan.hpp"

using namespace std::chrono_literals;
using namespace swarm::actors;
using swarm::resource_set;

namespace {

using kind = scale_action::kind;
using phase = scaled_node::phase;

// Two types: "small" (1 CPU) and "special" (2 CPUs and one "special"), at most 2 each.
swarm::autoscaler_config two_types() {
  swarm::autoscaler_config a;
  swarm::node_type small;
  small.name = "small";
  small.cpus = 1;
  small.max = 2;
  small.idle_timeout = 10s;
  swarm::node_type special = small;
  special.name = "special";
  special.cpus = 2;
  special.resources.set("special", 1);
  a.node_types = {small, special};
  a.max_launching = 3;
  a.retry_after = 1s;
  a.launch_timeout = 30s;
  return a;
}

resource_set demand(double cpus, double special = 0) {
  auto d = resource_set::cpus(cpus);
  if (special > 0) d.set("special", special);
  return d;
}

size_t launches_of(const std::vector<scale_action>& actions, size_t type) {
  return static_cast<size_t>(std::count_if(actions.begin(), actions.end(), [&](auto& a) {
    return a.what == kind::launch && a.type == type;
  }));
}

const auto t0 = std::chrono::steady_clock::time_point{} + 1h;

} // namespace

TEST_CASE("waiting work starts the first node type that fits it, packed into the room "
          "of nodes already starting, never past a type's max") {
  autoscale_plan plan{two_types()};
  // Two 1-CPU tasks share one small node; a 3rd needs another.
  auto a = plan.decide({demand(1), demand(1)}, {}, t0);
  CHECK(launches_of(a, 0) == 2);
  a = plan.decide({demand(1), demand(1)}, {{"small-a", 0, phase::launching, t0, {}}}, t0);
  CHECK(launches_of(a, 0) == 1);
  // A demand for "special" fits only the second type: at most 2 start, however many wait.
  std::vector<waiting_demand> many(5, demand(2, 1));
  a = plan.decide(many, {}, t0);
  CHECK(launches_of(a, 1) == 2);
  CHECK(launches_of(a, 0) == 0);
  CHECK(a.front().why == "work demanding {CPU: 2, special: 1} fits no live node");
  // Nothing fits a demand no type has.
  CHECK(plan.decide({demand(64)}, {}, t0).empty());
}

TEST_CASE("launches are rate-limited: no more than max_launching nodes start at once") {
  auto cfg = two_types();
  cfg.max_launching = 1;
  autoscale_plan plan{cfg};
  auto a = plan.decide({demand(1), demand(2, 1)}, {}, t0);
  CHECK(a.size() == 1);
  a = plan.decide({demand(2, 1)}, {{"small-a", 0, phase::launching, t0, {}}}, t0 + 1s);
  CHECK(a.empty());
  a = plan.decide({demand(2, 1)}, {{"small-a", 0, phase::up, t0, {}}}, t0 + 1s);
  CHECK(launches_of(a, 1) == 1);
}

TEST_CASE("more nodes start at once as the cluster grows: upscaling_speed times its "
          "live nodes, never fewer than max_launching") {
  auto cfg = two_types();
  cfg.max_launching = 1;
  cfg.node_types[0].max = 100;
  cfg.upscaling_speed = 0.5;
  std::vector<waiting_demand> many(50, demand(1));
  CHECK(launches_of(autoscale_plan{cfg}.decide(many, {}, t0, 1), 0) == 1);
  CHECK(launches_of(autoscale_plan{cfg}.decide(many, {}, t0, 20), 0) == 10);
  CHECK(launches_of(autoscale_plan{cfg}.decide(many, {}, t0, 41), 0) == 21);
  cfg.upscaling_speed = 0;
  CHECK(launches_of(autoscale_plan{cfg}.decide(many, {}, t0, 40), 0) == 1);
}

TEST_CASE("a type is kept at its min, and an idle node stops past its timeout but never "
          "below min nor while waiting work fits it") {
  auto cfg = two_types();
  cfg.node_types[0].min = 1;
  autoscale_plan plan{cfg};
  CHECK(launches_of(plan.decide({}, {}, t0), 0) == 1);
  std::vector<scaled_node> nodes{{"small-a", 0, phase::up, t0, t0},
                                 {"small-b", 0, phase::up, t0, t0 + 5s}};
  CHECK(plan.decide({}, nodes, t0 + 9s).empty());
  auto a = plan.decide({}, nodes, t0 + 10s);
  REQUIRE(a.size() == 1);
  CHECK(a[0].what == kind::stop);
  CHECK(a[0].node == "small-a");
  CHECK(a[0].why == "idle for 10.0 s");
  // Both idle long enough: one stops, the other is the type's min.
  a = plan.decide({}, nodes, t0 + 60s);
  CHECK(std::count_if(a.begin(), a.end(), [](auto& x) { return x.what == kind::stop; }) ==
        1);
  // Work waits that a small node would take: none stops.
  a = plan.decide({demand(1)}, nodes, t0 + 60s);
  CHECK(std::none_of(a.begin(), a.end(), [](auto& x) { return x.what == kind::stop; }));
}

TEST_CASE("a launch that does not join in time fails, and a failed type waits a back-off "
          "that doubles with each failure in a row, until a node of it joins") {
  autoscale_plan plan{two_types()};
  auto a = plan.decide({}, {{"small-a", 0, phase::launching, t0, {}}}, t0 + 30s);
  REQUIRE(a.size() == 1);
  CHECK(a[0].what == kind::fail);
  CHECK(a[0].why == "it did not join within 30.0 s");
  plan.launch_failed(0, t0);
  // Held back, the work goes to the next type that fits it.
  CHECK(launches_of(plan.decide({demand(1)}, {}, t0 + 999ms), 0) == 0);
  CHECK(launches_of(plan.decide({demand(1)}, {}, t0 + 999ms), 1) == 1);
  CHECK(launches_of(plan.decide({demand(1)}, {}, t0 + 1s), 0) == 1);
  plan.launch_failed(0, t0 + 1s);
  CHECK(plan.failures(0) == 2);
  CHECK(launches_of(plan.decide({demand(1)}, {}, t0 + 2s), 0) == 0);
  CHECK(launches_of(plan.decide({demand(1)}, {}, t0 + 3s), 0) == 1);
  // The other type is not held back.
  CHECK(launches_of(plan.decide({demand(2, 1)}, {}, t0 + 2s), 1) == 1);
  plan.launch_joined(0);
  CHECK(plan.failures(0) == 0);
  CHECK(launches_of(plan.decide({demand(1)}, {}, t0 + 1s), 0) == 1);
}

TEST_CASE("the bundles of a strict_spread group waiting for nodes start one node each, "
          "while other work still shares a node's room") {
  auto cfg = two_types();
  cfg.node_types[1].cpus = 4; // "special" has room for more than one bundle
  cfg.node_types[1].max = 4;
  cfg.max_launching = 4;
  autoscale_plan plan{cfg};
  // Three bundles of group 7, apart; a plain demand packs beside them.
  auto a = plan.decide(
      {{demand(1, 0.1), 7}, {demand(1, 0.1), 7}, {demand(1, 0.1), 7}, demand(1, 0.1)}, {},
      t0);
  CHECK(launches_of(a, 1) == 3);
  // Without the group they share one node.
  a = plan.decide({demand(1, 0.1), demand(1, 0.1), demand(1, 0.1)}, {}, t0);
  CHECK(launches_of(a, 1) == 1);
  // Bundles of two groups may share a node: one of each.
  a = plan.decide({{demand(1, 0.1), 7},
                   {demand(1, 0.1), 7},
                   {demand(1, 0.1), 8},
                   {demand(1, 0.1), 8}},
                  {}, t0);
  CHECK(launches_of(a, 1) == 2);
}
