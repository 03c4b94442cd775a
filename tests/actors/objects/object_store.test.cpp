#include <doctest/doctest.h>

#include <caf/all.hpp>
#include <caf/test/dsl.hpp>

#include <memory>
#include <string>
#include <vector>

#include "actors/common/protocol.hpp"
#include "actors/objects/object_store.hpp"
#include "actors/objects/store_table.hpp"

using namespace swarm::actors;
namespace detail = swarm::detail;

namespace {

// Steps the object store's actor on the test coordinator; replies land in `self`.
struct fixture : test_coordinator_fixture<> {
  std::shared_ptr<store_table> table = std::make_shared<store_table>(1 << 20, 100);
  caf::actor store = spawn_object_store(sys, table);

  ~fixture() override {
    caf::anon_send_exit(store, caf::exit_reason::user_shutdown);
    sched.run();
  }

  std::vector<size_t> stats() {
    std::vector<size_t> out;
    self->send(store, stats_atom::value);
    sched.run();
    self->receive(
        [&](size_t objects, size_t bytes, size_t capacity, size_t inline_threshold,
            size_t rejected) { out = {objects, bytes, capacity, inline_threshold, rejected}; },
        caf::after(std::chrono::seconds(0)) >> [] {});
    return out;
  }

  bool stored(uint64_t owner, uint64_t seq) {
    bool out = false;
    self->send(store, lookup_atom::value, owner, seq);
    sched.run();
    self->receive([&](bool b) { out = b; }, caf::after(std::chrono::seconds(0)) >> [] {});
    return out;
  }
};

detail::boxed_value bytes(size_t n) { return detail::boxed_value::make(std::string(n, 'x')); }

} // namespace

TEST_CASE_FIXTURE(fixture, "the object store reports what its table holds and finds stored objects") {
  auto big = table->admit({1, 1}, bytes(4096));
  REQUIRE(big);
  REQUIRE(*big); // over the inline threshold: accounted, with a lease
  auto small = table->admit({1, 2}, bytes(10));
  REQUIRE(small);
  CHECK_FALSE(*small); // inline: not accounted
  auto s = stats();
  REQUIRE(s.size() == 5);
  CHECK(s[0] == 1);
  CHECK(s[1] >= 4096);
  CHECK(s[2] == (1u << 20));
  CHECK(s[3] == 100);
  CHECK(stored(1, 1));
  CHECK_FALSE(stored(1, 2));
  big->reset(); // its owner let go: the bytes go back
  CHECK_FALSE(stored(1, 1));
  CHECK(stats()[1] == 0);
}

TEST_CASE_FIXTURE(fixture, "the object store counts values refused for want of room") {
  auto huge = table->admit({2, 1}, bytes(2 << 20));
  REQUIRE_FALSE(huge);
  CHECK(huge.err().code == swarm::errc::store_full);
  CHECK(stats()[4] == 1);
}
