// Spillback without the head: the choice a node makes from its own view.

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "actors/scheduling/spill_policy.hpp"

using swarm::actors::best_spill_target;
using swarm::actors::spill_candidate;
using swarm::actors::spill_draw;

namespace {

spill_candidate node(std::string name, bool room, uint64_t ahead, uint64_t bytes = 0) {
  spill_candidate c;
  c.name = std::move(name);
  c.room = room;
  c.ahead = ahead;
  c.input_bytes = bytes;
  return c;
}

} // namespace

TEST_CASE("a spill goes to no node when it weighed none") {
  CHECK(best_spill_target({}).empty());
}

TEST_CASE("a spill goes to a node with room first, then the one holding most of its "
          "inputs, then the one with the least work ahead") {
  CHECK(best_spill_target({node("a", false, 0), node("b", true, 5), node("c", true, 2),
                           node("d", false, 1)}) == "c");
  CHECK(best_spill_target({node("a", true, 0), node("b", true, 9, 1 << 20),
                           node("c", true, 0, 4096)}) == "b");
  CHECK(best_spill_target({node("a", true, 3), node("b", false, 0, 64 << 20)}) == "a");
}

TEST_CASE("a spill's draw visits every node once, in an order that differs by draw") {
  for (size_t n : {1u, 2u, 7u, 12u, 100u}) {
    std::set<std::vector<size_t>> orders;
    for (uint64_t draw = 0; draw < 20; ++draw) {
      spill_draw d{n, draw};
      std::vector<size_t> order;
      std::set<size_t> seen;
      for (size_t i = d.next(); i != n; i = d.next()) {
        order.push_back(i);
        seen.insert(i);
      }
      CHECK(order.size() == n);
      CHECK(seen.size() == n);
      orders.insert(order);
    }
    if (n > 2) CHECK(orders.size() > 5);
  }
  spill_draw none{0, 7};
  CHECK(none.next() == 0);
}

TEST_CASE("a burst of spills from one stale view spreads over the nodes it shows "
          "equally free") {
  // Each spill weighs the first three nodes of its draw, all free: it takes the first.
  std::vector<spill_candidate> all;
  for (int i = 0; i < 8; ++i)
    all.push_back(node("n" + std::to_string(i), true, 0));
  std::map<std::string, int> picked;
  for (uint64_t draw = 1000; draw < 1800; ++draw) {
    spill_draw d{all.size(), draw};
    std::vector<spill_candidate> weighed;
    for (int k = 0; k < 3; ++k)
      weighed.push_back(all[d.next()]);
    ++picked[best_spill_target(weighed)];
  }
  CHECK(picked.size() == 8);
  for (auto& [name, n] : picked)
    CHECK(n > 40); // 100 each on average
}

TEST_CASE("a spill weighs a few nodes when one of them has room, and more, up to its "
          "probes, when none has: on a full cluster it takes the least busy it saw") {
  using swarm::actors::draw_spill_candidates;
  // 64 nodes; node i has (i % 7) tasks ahead; those in `roomy` have room.
  auto run = [](const std::set<size_t>& roomy, std::vector<spill_candidate> weighed) {
    std::vector<size_t> looked;
    draw_spill_candidates(spill_draw{64, 99}, 3, 16, weighed, [&](size_t i) {
      looked.push_back(i);
      return std::optional<spill_candidate>{
          node("n" + std::to_string(i), roomy.count(i) > 0, i % 7)};
    });
    return std::make_pair(looked, weighed);
  };
  std::set<size_t> every;
  for (size_t i = 0; i < 64; ++i)
    every.insert(i);
  auto [some, with_room] = run(every, {});
  CHECK(some.size() == 3);
  CHECK(with_room.size() == 3);

  auto [all, full] = run({}, {});
  CHECK(all.size() == 16);
  auto least = *std::min_element(all.begin(), all.end(),
                                 [](size_t a, size_t b) { return a % 7 < b % 7; });
  CHECK(best_spill_target(full) == "n" + std::to_string(least));

  // The first with room ends the search once three are weighed.
  auto [looked, _] = run({all[9]}, {});
  CHECK(looked.size() == 10);
  CHECK(best_spill_target(run({all[9]}, {}).second) == "n" + std::to_string(all[9]));

  // A candidate weighed before (this node, or one holding the inputs) with room counts.
  auto [after_here, weighed] = run({}, {node("here", true, 0)});
  CHECK(after_here.size() == 3);
  CHECK(best_spill_target(weighed) == "here");

  // Nodes that cannot run it are not counted: every draw is looked at, up to the probes.
  std::vector<size_t> looked_at;
  std::vector<spill_candidate> none;
  draw_spill_candidates(spill_draw{5, 1}, 3, 16, none, [&](size_t i) {
    looked_at.push_back(i);
    return std::optional<spill_candidate>{};
  });
  CHECK(looked_at.size() == 5);
  CHECK(best_spill_target(none).empty());
}
