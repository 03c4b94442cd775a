// Spillback without the head: the choice a node makes from its own view.

#include <doctest/doctest.h>

#include <map>
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
