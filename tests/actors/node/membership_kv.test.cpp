// When the head places the key-value table spread over several nodes: first once the
// nodes of its file are in, and, started again, where its nodes say the shards' copies
// are.

#include "tests/actors/node/membership_fixture.hpp"

using namespace swarm::membership_test;

namespace {

using chain = std::vector<std::string>;

chain members_of(const wire_msg::kv_placement& p, uint32_t shard) {
  for (auto& c : p.chains)
    if (c.shard == shard) return c.members;
  return {};
}

// A placement an earlier life of the head made: shard 0 on the head with worker-1, shard
// 1 on worker-1 with worker-2.
wire_msg::kv_placement earlier_placement() {
  wire_msg::kv_placement p;
  p.version = 100;
  p.chains = {{0, {"head", "worker-1"}}, {1, {"worker-1", "worker-2"}}};
  return p;
}

} // namespace

TEST_CASE_FIXTURE(fixture, "the head places the key-value table once every node of its "
                           "file joined, or once the node timeout passed") {
  SUBCASE("all joined") {
    start("head", {"head", "worker-1", "worker-2"}, 2, 2, 2);
    join("worker-1");
    pass(500ms);
    CHECK(port.placements.empty()); // worker-2 may hold copies: not placed without it
    join("worker-2");
    REQUIRE(port.placements.size() == 1);
    CHECK(members_of(port.placements[0], 1) == chain{"worker-1", "worker-2"});
  }
  SUBCASE("one never comes") {
    start("head", {"head", "worker-1", "worker-2"}, 2, 2, 2);
    join("worker-1");
    pass(1500ms);
    CHECK(port.placements.empty());
    heartbeat("worker-1");
    pass(600ms); // past the node timeout (2 s) since the head started
    REQUIRE(port.placements.size() == 1);
    CHECK(members_of(port.placements[0], 1) == chain{"worker-1", "head"});
  }
}

TEST_CASE_FIXTURE(fixture, "a head started again takes the key-value placement its nodes "
                           "hold: no shard leaves the nodes with its copies, and its own "
                           "come back to it after it has theirs") {
  start("head", {"head", "worker-1", "worker-2"}, 2, 2, 2);
  join_holding("worker-1", earlier_placement());
  // An older placement (a node that missed the last) is not taken over the newer one.
  auto older = earlier_placement();
  older.version = 50;
  older.chains[1].members = {"worker-2", "head"};
  join_holding("worker-2", older);
  REQUIRE(!port.placements.empty());
  auto& first = port.placements.front();
  CHECK(first.version > 100);
  // The head's copies died with its earlier life: its shard goes to the member that
  // holds it; worker-1's stays where it was.
  CHECK(members_of(first, 0) == chain{"worker-1", "worker-2"});
  CHECK(members_of(first, 1) == chain{"worker-1", "worker-2"});
  // Then the head is a member of its shard again (it recovers the rows), and heads it.
  pass(1000ms);
  auto& last = port.placements.back();
  CHECK(members_of(last, 0) == chain{"head", "worker-1"});
  CHECK(members_of(last, 1) == chain{"worker-1", "worker-2"});
  bool member_first = false;
  for (auto& p : port.placements) {
    auto c = members_of(p, 0);
    if (c.size() == 3 && c.back() == "head") member_first = true;
  }
  CHECK(member_first);
}

TEST_CASE_FIXTURE(fixture, "a head started again counts a node that joined holding no "
                           "placement as one without copies: its shards go to their "
                           "other members") {
  start("head", {"head", "worker-1", "worker-2"}, 2, 2, 2);
  join("worker-1"); // restarted while the head was down: it holds nothing
  join_holding("worker-2", earlier_placement());
  REQUIRE(!port.placements.empty());
  auto& first = port.placements.front();
  CHECK(members_of(first, 1) == chain{"worker-2"}); // worker-1's copy died with it
  // Shard 0 had the head and worker-1: no copy is left, and no host is: the head takes
  // it.
  CHECK(members_of(first, 0) == chain{"head", "worker-2"});
  pass(1000ms); // then both come back as members first
  CHECK(members_of(port.placements.back(), 1).size() == 2);
}

TEST_CASE_FIXTURE(fixture,
                  "a head started again keeps a shard none of whose members with "
                  "a copy is back for them until twice the node timeout, served by "
                  "none, then places it on the nodes alive") {
  start("head", {"head", "worker-1", "worker-2"}, 2, 2, 2);
  join_holding("worker-2", earlier_placement());
  auto beat_for = [&](int half_seconds) {
    for (int i = 0; i < half_seconds; ++i) {
      pass(500ms);
      heartbeat("worker-2");
    }
  };
  beat_for(4); // the node timeout: worker-1 did not join
  REQUIRE(!port.placements.empty());
  // Shard 0's copies: the head's died with its earlier life; worker-1's may come back.
  CHECK(members_of(port.placements.back(), 0) == chain{"worker-1"});
  // Shard 1 stays with worker-2, which holds it; the head is a member again.
  CHECK(members_of(port.placements.back(), 1) == chain{"worker-2", "head"});
  beat_for(3);
  CHECK(members_of(port.placements.back(), 0) == chain{"worker-1"});
  beat_for(1);
  CHECK(members_of(port.placements.back(), 0) == chain{"head", "worker-2"});
}
