// Where the head places the key-value table's shards when several nodes serve them.

#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "actors/node/kv_placer.hpp"

using namespace swarm::actors;

namespace {

using chain = std::vector<std::string>;

struct rig {
  std::set<std::string> up{"worker-1", "worker-2", "worker-3"};
  std::set<std::string> returning; // not back yet, may come back with their copies
  kv_placer placer{{{"head", "worker-1", "worker-2", "worker-3"}, "head", 3, 2, 4}};
  uint64_t now = 1000;

  bool update() {
    return placer.update(
        [this](const std::string& n) { return up.count(n) != 0; }, ++now,
        [this](const std::string& n) { return returning.count(n) != 0; });
  }

  std::vector<uint64_t> since(size_t shard) const {
    return placer.placement().chains.at(shard).since;
  }

  chain of(size_t shard) const { return placer.placement().chains.at(shard).members; }
};

} // namespace

TEST_CASE("each key-value shard is served by its host, with a chain of the next nodes") {
  rig r;
  REQUIRE(r.update());
  CHECK(r.of(0) == chain{"head", "worker-1"});
  CHECK(r.of(1) == chain{"worker-1", "worker-2"});
  CHECK(r.of(2) == chain{"worker-2", "worker-3"});
  CHECK(r.of(3) == chain{"head", "worker-1"});
  auto v = r.placer.placement().version;
  CHECK_FALSE(r.update());
  CHECK(r.placer.placement().version == v);
}

TEST_CASE("a lost host's shards go to the next member of their chains, which hold them") {
  rig r;
  REQUIRE(r.update());
  auto v = r.placer.placement().version;
  r.up.erase("worker-1");
  REQUIRE(r.update());
  CHECK(r.placer.placement().version > v);
  CHECK(r.of(1) == chain{"worker-2", "worker-3"});
  // The head's shards keep their primary and get another member.
  CHECK(r.of(0) == chain{"head", "worker-2"});
  CHECK(r.placer.changes().size() == 3);
}

TEST_CASE("a host that comes back is a member of its shard first, then serves it again") {
  rig r;
  REQUIRE(r.update());
  r.up.erase("worker-1");
  REQUIRE(r.update());
  r.up.insert("worker-1");
  REQUIRE(r.update());
  CHECK(r.of(1) == chain{"worker-2", "worker-3", "worker-1"});
  REQUIRE(r.update());
  // The old primary stays a member: the host recovers the rows from it.
  CHECK(r.of(1) == chain{"worker-1", "worker-2"});
  CHECK_FALSE(r.update());
}

TEST_CASE("a shard whose every member is lost goes to the next live host") {
  rig r;
  REQUIRE(r.update());
  r.up = {"worker-3"};
  REQUIRE(r.update());
  CHECK(r.of(2) == chain{"worker-3", "head"});
  CHECK(r.of(1) == chain{"head", "worker-3"});
}

TEST_CASE("a restarted head's placement is newer than its earlier life's") {
  rig before;
  before.now = 5'000'000;
  REQUIRE(before.update());
  rig after; // starts its versions from the wall clock it is given
  after.now = 6'000'000;
  REQUIRE(after.update());
  CHECK(after.placer.placement().version > before.placer.placement().version);
}

TEST_CASE("a head started again takes the newest placement its nodes hold, with its own "
          "shards placed as a lost host's") {
  rig before;
  REQUIRE(before.update()); // the earlier life's placement
  rig after;
  CHECK_FALSE(after.placer.adopt(swarm::wire_msg::kv_placement{})); // none held
  auto held = before.placer.placement();
  auto mismatched = held;
  mismatched.chains.pop_back(); // another number of shards
  CHECK_FALSE(after.placer.adopt(mismatched));
  REQUIRE(after.placer.adopt(held));
  auto older = held;
  older.version -= 1;
  CHECK_FALSE(after.placer.adopt(older));
  CHECK(after.placer.placement().version == held.version);
  // Its copies died with it: the head's shards go to their next members, the others stay.
  REQUIRE(after.update());
  CHECK(after.placer.placement().version > held.version);
  CHECK(after.of(0) == chain{"worker-1", "worker-2"});
  CHECK(after.of(3) == chain{"worker-1", "worker-2"});
  CHECK(after.of(1) == chain{"worker-1", "worker-2"});
  CHECK(after.of(2) == chain{"worker-2", "worker-3"});
  // Then it comes back as a host does: a member first, then their primary.
  REQUIRE(after.update());
  CHECK(after.of(0) == chain{"worker-1", "worker-2", "head"});
  REQUIRE(after.update());
  CHECK(after.of(0) == chain{"head", "worker-1"});
  CHECK_FALSE(after.update());
}

TEST_CASE("a head started again with none of its shards' hosts alive places them on "
          "itself") {
  rig before;
  REQUIRE(before.update());
  rig after;
  after.up = {"worker-3"}; // not a host (3 hosts: the head, worker-1, worker-2)
  REQUIRE(after.placer.adopt(before.placer.placement()));
  REQUIRE(after.update());
  CHECK(after.of(0) == chain{"head", "worker-3"});
  CHECK(after.of(1) == chain{"head", "worker-3"});
  CHECK(after.of(2) == chain{"worker-3"});
}

TEST_CASE("a node that joined a head started again as a new process holds no copies of "
          "the placement the head takes: its shards go as a lost host's") {
  rig before;
  REQUIRE(before.update());
  REQUIRE(before.of(1) == chain{"worker-1", "worker-2"});
  rig after;
  after.placer.joined_empty("worker-1"); // restarted while the head was down
  REQUIRE(after.placer.adopt(before.placer.placement()));
  REQUIRE(after.update());
  CHECK(after.of(1) == chain{"worker-2", "worker-3"});
  CHECK(after.of(2) == chain{"worker-2", "worker-3"});
  // Shard 0 had the head and worker-1 only: every copy is gone, its new chain says so.
  CHECK(after.of(0) == chain{"worker-2", "worker-3"});
  // Both come back as hosts do: members first.
  REQUIRE(after.update());
  CHECK(after.of(1) == chain{"worker-2", "worker-3", "worker-1"});

  rig fresh; // a head's first placement, nothing taken: a node that joined empty is new
  fresh.placer.joined_empty("worker-1");
  REQUIRE(fresh.update());
  CHECK(fresh.of(1) == chain{"worker-1", "worker-2"});
}

TEST_CASE("a key-value chain says since when each member is one without a break") {
  rig r;
  REQUIRE(r.update());
  auto v1 = r.placer.placement().version;
  CHECK(r.placer.placement().chains[1].since == std::vector<uint64_t>{0, 0}); // new
  r.up.erase("worker-1");
  REQUIRE(r.update());
  auto v2 = r.placer.placement().version;
  REQUIRE(v2 > v1);
  REQUIRE(r.of(1) == chain{"worker-2", "worker-3"});
  CHECK(r.placer.placement().chains[1].since == std::vector<uint64_t>{0, v2});
  r.up.insert("worker-1"); // back: a member since now, though it was one before
  REQUIRE(r.update());
  auto v3 = r.placer.placement().version;
  REQUIRE(r.of(1) == chain{"worker-2", "worker-3", "worker-1"});
  CHECK(r.placer.placement().chains[1].since == std::vector<uint64_t>{0, v2, v3});
  REQUIRE(r.update()); // it heads it again; the others stay members as they were
  REQUIRE(r.of(1) == chain{"worker-1", "worker-2"});
  CHECK(r.placer.placement().chains[1].since == std::vector<uint64_t>{v3, 0});
}

TEST_CASE(
    "a shard none of whose members with a copy is back at a head started again waits "
    "for those that may come back, then starts empty elsewhere") {
  rig before;
  REQUIRE(before.update());
  REQUIRE(before.of(0) == chain{"head", "worker-1"});
  REQUIRE(before.of(1) == chain{"worker-1", "worker-2"});
  rig after;
  after.up = {"worker-3"};
  after.returning = {"worker-1", "worker-2"};
  REQUIRE(after.placer.adopt(before.placer.placement()));
  REQUIRE(after.update());
  CHECK(after.placer.holding());
  // Kept for the members that may come back (the head's copy died with it), as members
  // since when they were: no node serves them meanwhile.
  CHECK(after.of(1) == chain{"worker-1", "worker-2"});
  CHECK(after.since(1) == std::vector<uint64_t>{0, 0});
  CHECK(after.of(0) == chain{"worker-1"});
  CHECK(after.since(0) == std::vector<uint64_t>{0});
  CHECK(after.of(2) == chain{"worker-3"}); // worker-3 holds it
  // worker-1 is back: it serves its shards again, with a new member.
  after.up.insert("worker-1");
  after.returning.erase("worker-1");
  REQUIRE(after.update());
  CHECK_FALSE(after.placer.holding());
  CHECK(after.of(1) == chain{"worker-1", "worker-3"});
  CHECK(after.since(1) == std::vector<uint64_t>{0, after.placer.placement().version});

  // worker-2 never comes back: once it may no longer, its shard starts empty.
  rig lost;
  lost.up = {"worker-1", "worker-3"};
  lost.returning = {"worker-2"};
  lost.placer.joined_empty("worker-1");
  REQUIRE(lost.placer.adopt(before.placer.placement()));
  REQUIRE(lost.update());
  CHECK(lost.placer.holding());
  CHECK(lost.of(1) == chain{"worker-2"});
  lost.returning.clear();
  REQUIRE(lost.update());
  CHECK_FALSE(lost.placer.holding());
  auto v = lost.placer.placement().version;
  CHECK(lost.of(1) == chain{"worker-1", "worker-3"});
  CHECK(lost.since(1) == std::vector<uint64_t>{v, v});
}

TEST_CASE(
    "a node that joined empty, placed again in a chain it was in, is a member since "
    "then") {
  rig r;
  REQUIRE(r.update());
  REQUIRE(r.of(1) == chain{"worker-1", "worker-2"});
  r.placer.joined_empty("worker-1"); // a new process: its copies died with the old one
  REQUIRE(r.update());
  auto v = r.placer.placement().version;
  CHECK(r.of(1) == chain{"worker-2", "worker-1"});
  CHECK(r.since(1) == std::vector<uint64_t>{0, v});
}
