#include <doctest/doctest.h>

#include "actors/control_store/gcs_shard.hpp"
#include "actors/objects/store_table.hpp"
#include "actors/scheduling/task_inbox.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <vector>

namespace {

swarm::detail::boxed_value bytes(size_t n) {
  return swarm::detail::boxed_value::make(std::vector<char>(n));
}

} // namespace

TEST_CASE("the store accounts admitted objects until their leases go") {
  auto table = std::make_shared<swarm::actors::store_table>(10000, 100);
  auto a = table->admit({1, 1}, bytes(3000));
  auto b = table->admit({1, 2}, bytes(3000));
  REQUIRE(a);
  REQUIRE(b);
  CHECK(table->stats().objects == 2);
  CHECK(table->contains({1, 1}));
  a->reset();
  CHECK(table->stats().objects == 1);
  CHECK_FALSE(table->contains({1, 1}));
  b->reset();
  CHECK(table->stats().bytes == 0);
}

TEST_CASE("an object made again on the same node, as a retried task's result, is counted "
          "once until both copies go") {
  auto table = std::make_shared<swarm::actors::store_table>(10000, 100);
  auto first = table->admit({1, 1}, bytes(3000));
  auto again = table->admit({1, 1}, bytes(3000));
  REQUIRE(first);
  REQUIRE(again);
  CHECK(table->stats().objects == 1);
  CHECK(table->stats().bytes == table->objects().front().bytes);
  first->reset();
  CHECK(table->contains({1, 1}));
  CHECK(table->stats().bytes == table->objects().front().bytes);
  again->reset();
  CHECK_FALSE(table->contains({1, 1}));
  CHECK(table->stats().bytes == 0);
}

TEST_CASE("values under the inline threshold take no store room") {
  auto table = std::make_shared<swarm::actors::store_table>(1000, 100);
  auto small = table->admit({1, 1}, bytes(10));
  REQUIRE(small);
  CHECK(*small == nullptr);
  CHECK(table->stats().objects == 0);
}

TEST_CASE("a value that does not fit is refused and counted") {
  auto table = std::make_shared<swarm::actors::store_table>(5000, 100);
  auto a = table->admit({1, 1}, bytes(4000));
  REQUIRE(a);
  auto b = table->admit({1, 2}, bytes(4000));
  REQUIRE_FALSE(b);
  CHECK(b.err().code == swarm::errc::store_full);
  CHECK(table->stats().rejected == 1);
}

TEST_CASE("the memory of freed values the store keeps gives way to an object needing the "
          "room") {
  constexpr size_t mib = size_t{1} << 20;
  auto table = std::make_shared<swarm::actors::store_table>(10 * mib, 100, 10 * mib);
  {
    auto v = swarm::detail::box_for_store(&table->pool(), std::vector<char>(6 * mib));
    auto a = table->admit({1, 1}, v);
    REQUIRE(a);
  }
  CHECK(table->stats().bytes == 0);
  CHECK(table->stats().pooled_bytes >= 6 * mib);
  auto b = table->admit({1, 2}, bytes(8 * mib));
  REQUIRE(b);
  CHECK(table->stats().pooled_bytes == 0);
  auto c = table->admit_secondary({1, 3}, 3 * mib);
  CHECK_FALSE(c); // nothing is left to shed
}

TEST_CASE("control-store keys map to a stable shard") {
  CHECK(swarm::actors::shard_of("ps", 1) == 0);
  auto s = swarm::actors::shard_of("ps", 8);
  CHECK(s < 8);
  CHECK(swarm::actors::shard_of("ps", 8) == s);
  CHECK(swarm::actors::shard_of("", 0) == 0);
}

TEST_CASE("concurrent admits and releases keep the store's accounting exact") {
  auto table = std::make_shared<swarm::actors::store_table>(1 << 30, 100);
  std::vector<std::thread> threads;
  for (uint64_t t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (uint64_t i = 0; i < 500; ++i) {
        auto lease = table->admit({t, i}, bytes(1000));
        REQUIRE(lease);
      }
    });
  for (auto& t : threads)
    t.join();
  CHECK(table->stats().objects == 0);
  CHECK(table->stats().bytes == 0);
}

TEST_CASE("tasks pushed from many threads are drained once, with one wake-up per burst") {
  swarm::actors::task_inbox inbox;
  std::atomic<int> wakes{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 250; ++i) {
        bool accepted = false;
        if (inbox.push(std::make_shared<swarm::detail::task_spec>(), accepted)) ++wakes;
        REQUIRE(accepted);
      }
    });
  for (auto& t : threads)
    t.join();
  CHECK(wakes.load() == 1);
  CHECK(inbox.drain().size() == 1000);
  CHECK(inbox.empty());
  bool accepted = true;
  inbox.close();
  CHECK_FALSE(inbox.push(std::make_shared<swarm::detail::task_spec>(), accepted));
  CHECK_FALSE(accepted);
}

namespace {

using swarm::actors::cached_copy;
using swarm::actors::store_table;

// A secondary copy of `n` bytes of object `id`, counted by `table` while its value lives
// (as the object manager keeps one), registered with the table as cached.
std::shared_ptr<cached_copy> cached(store_table& table, swarm::object_id id, size_t n) {
  auto lease = table.admit_secondary(id, n);
  REQUIRE(lease);
  auto counted = std::make_shared<
      std::pair<std::vector<char>, std::unique_ptr<swarm::detail::store_lease>>>(
      std::vector<char>(n), std::move(*lease));
  auto copy = std::make_shared<cached_copy>(
      std::shared_ptr<const void>{counted, counted.get()}, n);
  table.cache(copy);
  return copy;
}

// A primary object of `n` bytes held by its slot, which the table may spill.
std::shared_ptr<swarm::detail::object_slot> primary(store_table& table,
                                                    swarm::object_id id, size_t n) {
  auto slot = std::make_shared<swarm::detail::object_slot>(id);
  auto v = bytes(n);
  auto lease = table.admit(id, v);
  REQUIRE(lease);
  slot->set_value(std::move(v), std::move(*lease));
  return slot;
}

} // namespace

TEST_CASE("cached copies nobody reads are evicted, least recently used first, before any "
          "object spills") {
  constexpr size_t mib = 1 << 20;
  auto dir = std::filesystem::temp_directory_path() /
             ("swarm-evict-test-" + std::to_string(::getpid()));
  auto table = std::make_shared<store_table>(
      3 * mib + 1000, 100, 0, swarm::actors::spill_config{dir.string(), "t", 0});
  auto p = primary(*table, {1, 1}, mib);
  auto older = cached(*table, {2, 1}, mib);
  auto newer = cached(*table, {2, 2}, mib);
  REQUIRE(newer->get()); // read: the most recent
  auto q = primary(*table, {1, 2}, mib);
  CHECK_FALSE(older->peek());
  CHECK(newer->peek());
  CHECK_FALSE(p->spilled());
  auto s = table->stats();
  CHECK(s.evictions == 1);
  CHECK(s.spills == 0);
  CHECK(s.cached_objects == 1);
  CHECK(s.cached_bytes == mib);
  // A copy being read stays: the next object spills a primary instead.
  auto reading = newer->get();
  auto r = primary(*table, {1, 3}, mib);
  CHECK(newer->peek());
  CHECK(table->stats().spills == 1);
  CHECK(p->spilled() != q->spilled()); // one of them went to disk
  reading.reset();
  table->count_lookup(true);
  table->count_lookup(false);
  table->count_lookup(false);
  CHECK(table->stats().cache_hits == 1);
  CHECK(table->stats().cache_misses == 2);
  p.reset();
  q.reset();
  r.reset();
  newer.reset();
  older.reset();
  table.reset(); // the last lease went: the store and its spill folder go
  for (auto& e : std::filesystem::directory_iterator{dir})
    CHECK(e.path().filename().string().rfind("swarm-spill-t-", 0) != 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("concurrent reads of the store's statistics and drops of cached copies never "
          "wait on the store itself") {
  // The membership reads the statistics each tick while the object manager drops copies:
  // a copy whose last hold the read took went under the store's lock, and its lease,
  // giving its bytes back, waited on that lock for ever.
  auto table = std::make_shared<store_table>(1 << 30, 100);
  std::atomic<bool> dropping{true};
  std::atomic<int> finished{0};
  std::thread reader{[&] {
    while (dropping)
      (void)table->stats();
    ++finished;
  }};
  // Copies made in batches and dropped last first, while the reader walks them first
  // first: the two meet on one copy again and again.
  std::thread dropper{[&] {
    std::vector<std::shared_ptr<cached_copy>> batch;
    for (uint64_t round = 0; round < 200; ++round) {
      for (uint64_t i = 0; i < 100; ++i)
        batch.push_back(cached(*table, {round, i}, 1000));
      while (!batch.empty())
        batch.pop_back();
    }
    dropping = false;
    ++finished;
  }};
  for (int i = 0; i < 600 && finished < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (finished < 2) {
    // Deadlocked threads cannot be joined: the process ends with the verdict.
    std::fprintf(stderr, "the store's statistics and a dropped copy deadlocked\n");
    std::_Exit(1);
  }
  reader.join();
  dropper.join();
  auto s = table->stats();
  CHECK(s.bytes == 0);
  CHECK(s.secondary_bytes == 0);
  CHECK(s.cached_objects == 0);
}

TEST_CASE("an object larger than the whole store is refused as such, spilling or not") {
  constexpr size_t mib = 1 << 20;
  auto dir = std::filesystem::temp_directory_path() /
             ("swarm-too-large-test-" + std::to_string(::getpid()));
  auto table = std::make_shared<store_table>(
      mib, 100, 0, swarm::actors::spill_config{dir.string(), "t", 0});
  auto p = primary(*table, {1, 1}, mib / 2); // something that could be spilled
  auto big = table->admit({1, 2}, bytes(2 * mib));
  REQUIRE_FALSE(big);
  CHECK(big.err().code == swarm::errc::store_full);
  CHECK(big.err().message.find("is larger than the whole object store (1.00 MiB)") !=
        std::string::npos);
  CHECK(big.err().message.find("spilled") == std::string::npos);
  CHECK_FALSE(p->spilled()); // nothing went to disk for it
}
