// The results a stopping node hands over, on both sides.

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "actors/objects/hand_over_table.hpp"

using swarm::actors::hand_over_table;
using swarm::actors::object_key;

TEST_CASE("a stopping node is done handing over once every owner answered for every "
          "result, or was lost") {
  hand_over_table t;
  CHECK(t.done());
  t.start({{"a", {{1, 1}, {1, 2}}}, {"b", {{2, 1}}}});
  CHECK_FALSE(t.done());
  t.taken("a", {{1, 1}});
  t.taken("c", {{1, 2}}); // not asked: changes nothing
  t.taken("b", {{1, 1}}); // not b's
  CHECK_FALSE(t.done());
  t.taken("a", {{1, 2}, {1, 2}});
  CHECK_FALSE(t.done());
  CHECK(t.handed() == 2);
  t.lost("b");
  CHECK(t.done());
  CHECK(t.handed() == 2);
}

TEST_CASE("an owner answers the nodes waiting for its pull once, when it ends, and not "
          "a node lost meanwhile") {
  hand_over_table t;
  object_key k{7, 3};
  CHECK(t.pull_ended(k).empty());
  t.await_pull(k, "w1");
  t.await_pull(k, "w1");
  t.await_pull(k, "w2");
  t.await_pull({7, 4}, "w2");
  t.lost("w2");
  CHECK(t.pull_ended(k) == std::vector<std::string>{"w1"});
  CHECK(t.pull_ended(k).empty());
  CHECK(t.pull_ended({7, 4}).empty());
}
