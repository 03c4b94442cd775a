#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "actors/scheduling/placement_groups.hpp"

using swarm::placement_strategy;
using swarm::resource_set;
using swarm::actors::group_request;
using swarm::actors::group_table;
using swarm::actors::place_bundles;
using swarm::actors::waiting_demand;

namespace {

resource_set cpus(double n) {
  return resource_set::cpus(n);
}

std::vector<std::pair<std::string, resource_set>> rooms(double a, double b, double c) {
  return {{"a", cpus(a)}, {"b", cpus(b)}, {"c", cpus(c)}};
}

using answers = std::vector<swarm::result<swarm::detail::group_placement>>;

group_request ask(group_request::kind k, uint64_t id, answers& out,
                  std::vector<resource_set> bundles = {},
                  placement_strategy s = placement_strategy::pack) {
  group_request r;
  r.what = k;
  r.id = id;
  r.options.bundles = std::move(bundles);
  r.options.strategy = s;
  r.then = [&out](swarm::result<swarm::detail::group_placement> a) {
    out.push_back(std::move(a));
  };
  return r;
}

} // namespace

TEST_CASE(
    "pack puts a gang on one node when it fits, and on as few as it can otherwise") {
  auto one = place_bundles({cpus(1), cpus(1)}, placement_strategy::pack, rooms(1, 2, 4));
  REQUIRE(one);
  CHECK(*one == std::vector<std::string>{"b", "b"});
  auto two = place_bundles({cpus(2), cpus(2), cpus(1)}, placement_strategy::pack,
                           rooms(1, 2, 3));
  REQUIRE(two);
  CHECK(*two == std::vector<std::string>{"b", "c", "c"});
  CHECK_FALSE(
      place_bundles({cpus(2), cpus(2)}, placement_strategy::strict_pack, rooms(1, 3, 3)));
  CHECK_FALSE(
      place_bundles({cpus(4), cpus(4)}, placement_strategy::pack, rooms(1, 3, 3)));
}

TEST_CASE("spread uses distinct nodes while it can, strict_spread only distinct nodes") {
  auto spread = place_bundles({cpus(1), cpus(1), cpus(1), cpus(1)},
                              placement_strategy::spread, rooms(2, 2, 2));
  REQUIRE(spread);
  CHECK(*spread == std::vector<std::string>{"a", "b", "c", "a"});
  CHECK_FALSE(place_bundles({cpus(1), cpus(1), cpus(1), cpus(1)},
                            placement_strategy::strict_spread, rooms(2, 2, 2)));
  auto strict = place_bundles({cpus(1), cpus(2)}, placement_strategy::strict_spread,
                              rooms(2, 1, 2));
  REQUIRE(strict);
  CHECK(*strict == std::vector<std::string>{"a", "c"});
}

TEST_CASE(
    "a group that cannot fit waits, all or none, and fits once another is removed") {
  group_table t;
  group_table::node_totals nodes{{"a", {cpus(2), true}}, {"b", {cpus(2), true}}};
  answers first, second;
  t.handle(ask(group_request::kind::create, 1, first, {cpus(2), cpus(1)}), nodes);
  t.handle(ask(group_request::kind::wait, 1, first), nodes);
  REQUIRE(first.size() == 2);
  CHECK(first[1]->nodes == std::vector<std::string>{"a", "b"});
  // Needs 2 on one node and 1 anywhere: only 1 is free, so nothing is reserved.
  t.handle(ask(group_request::kind::create, 2, second, {cpus(2), cpus(1)},
               placement_strategy::strict_spread),
           nodes);
  t.handle(ask(group_request::kind::wait, 2, second), nodes);
  CHECK(second.size() == 1);
  CHECK(t.reserved_on("b") == cpus(1));
  answers query;
  t.handle(ask(group_request::kind::query, 2, query), nodes);
  REQUIRE(query.size() == 1);
  CHECK(query[0].err().message.find("not placed yet") != std::string::npos);
  answers removed;
  t.handle(ask(group_request::kind::remove, 1, removed), nodes);
  REQUIRE(second.size() == 2);
  CHECK(second[1]->nodes == std::vector<std::string>{"a", "b"});
  CHECK(second[1]->bundles == std::vector<resource_set>{cpus(2), cpus(1)});
}

TEST_CASE("a group with a bundle on a node that died is placed again as a whole, and "
          "bad groups are refused at once") {
  group_table t;
  group_table::node_totals nodes{
      {"a", {cpus(1), true}}, {"b", {cpus(1), true}}, {"c", {cpus(1), true}}};
  answers got;
  t.handle(ask(group_request::kind::create, 7, got, {cpus(1), cpus(1)},
               placement_strategy::strict_spread),
           nodes);
  t.handle(ask(group_request::kind::wait, 7, got), nodes);
  REQUIRE(got.size() == 2);
  CHECK(got[1]->nodes == std::vector<std::string>{"a", "b"});
  nodes["a"].second = false;
  t.nodes_changed(nodes);
  t.handle(ask(group_request::kind::wait, 7, got), nodes);
  REQUIRE(got.size() == 3);
  CHECK(got[2]->nodes == std::vector<std::string>{"b", "c"});
  CHECK(t.reserved_on("a").empty());

  answers bad;
  t.handle(ask(group_request::kind::create, 8, bad, {}), nodes);
  t.handle(ask(group_request::kind::create, 9, bad, {cpus(5)}), nodes);
  t.handle(ask(group_request::kind::create, 10, bad, {cpus(1), cpus(1)},
               placement_strategy::strict_pack),
           nodes);
  t.handle(ask(group_request::kind::wait, 11, bad), nodes);
  REQUIRE(bad.size() == 4);
  CHECK(bad[0].err().code == swarm::errc::invalid_argument);
  CHECK(bad[1].err().code == swarm::errc::infeasible);
  CHECK(bad[2].err().code == swarm::errc::infeasible);
  CHECK(bad[3].err().message.find("does not exist") != std::string::npos);
}

TEST_CASE("a group whose bundle fits only a node type the autoscaler may start waits for "
          "such a node, its bundles counted as waiting, instead of being refused") {
  group_table t;
  group_table::node_totals nodes{{"a", {cpus(2), true}}};
  answers refused, accepted, placed;
  t.handle(ask(group_request::kind::create, 1, refused, {cpus(8)}), nodes);
  REQUIRE(refused.size() == 1);
  CHECK(refused[0].err().code == swarm::errc::infeasible);
  t.set_scalable({cpus(8)});
  t.handle(ask(group_request::kind::create, 2, accepted, {cpus(8), cpus(1)}), nodes);
  REQUIRE(accepted.size() == 1);
  CHECK(accepted[0]);
  t.handle(ask(group_request::kind::wait, 2, placed), nodes);
  CHECK(placed.empty());
  CHECK(t.waiting_bundles() == std::vector<waiting_demand>{cpus(8), cpus(1)});
  // A strict_spread group's bundles wait apart; a strict_pack group's as one.
  t.handle(ask(group_request::kind::create, 3, accepted, {cpus(4), cpus(4)},
               placement_strategy::strict_spread),
           nodes);
  t.handle(ask(group_request::kind::create, 4, accepted, {cpus(3), cpus(2)},
               placement_strategy::strict_pack),
           nodes);
  CHECK(
      t.waiting_bundles() ==
      std::vector<waiting_demand>{cpus(8), cpus(1), {cpus(4), 3}, {cpus(4), 3}, cpus(5)});
  t.handle(ask(group_request::kind::remove, 3, accepted), nodes);
  t.handle(ask(group_request::kind::remove, 4, accepted), nodes);
  nodes["big"] = {cpus(8), true};
  t.nodes_changed(nodes);
  REQUIRE(placed.size() == 1);
  CHECK(placed[0]);
  CHECK(t.waiting_bundles().empty());
}
