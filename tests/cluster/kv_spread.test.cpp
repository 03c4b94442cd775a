// The key-value table's shards served by several nodes (cluster.gcs_hosts), each with its
// own chain: a node that serves shards is killed, and nothing written is lost. The head
// and the workers are node processes; this test process is the driver, a node of its own.

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "tests/cluster/process_cluster.hpp"

using namespace std::chrono_literals;
using namespace swarm::cluster_test;

namespace {

// The node serving key-value shard `shard` as the head's log last placed it: the lines
// read "key-value placement: shard 1: worker-1 -> head => worker-2 -> driver".
std::string primary_of(const std::string& head_log, int shard) {
  auto tag = "key-value placement: shard " + std::to_string(shard) + ": ";
  auto at = head_log.rfind(tag);
  if (at == std::string::npos) return "";
  auto line = head_log.substr(at, head_log.find('\n', at) - at);
  auto to = line.find("=> ");
  if (to == std::string::npos) return "";
  auto chain = line.substr(to + 3);
  return chain.substr(0, chain.find(" -> "));
}

// Four key-value shards on three hosts (the head, worker-1, worker-2), each chain of
// two; this process is the driver, the file's fourth node. Up once all four are alive
// and worker-1 serves shard 1.
struct spread_cluster : process_cluster {
  std::unique_ptr<node_process> head = start("head", "head.log");
  std::unique_ptr<node_process> w1 = start("worker-1", "worker-1.log");
  std::unique_ptr<node_process> w2 = start("worker-2", "worker-2.log");
  swarm::application app;
  std::unique_ptr<swarm::runtime> rt;

  spread_cluster()
      : process_cluster("gcs_shards = 4\ngcs_replication = 2\ngcs_hosts = 3\n",
                        {"worker-1", "worker-2", "driver"}) {
    register_all(app);
    rt = std::make_unique<swarm::runtime>(app, cfg, "driver");
    REQUIRE(eventually(20s, [&] {
      auto s = status();
      return s && s->alive() == 4 && primary_of(head->log(), 1) == "worker-1";
    }));
  }

  ~spread_cluster() {
    rt.reset();
    head->stop();
  }

  static std::vector<uint8_t> value(int i) {
    return std::vector<uint8_t>(50 + i, static_cast<uint8_t>(i));
  }
  static std::string key(int i) { return "key-" + std::to_string(i); }

  void put(int i) {
    auto r = rt->kv_put(key(i), value(i));
    REQUIRE_MESSAGE(r, (r ? "" : r.err().to_string()));
  }
};

} // namespace

TEST_CASE_FIXTURE(spread_cluster,
                  "a key-value shard served by a killed worker fails over to its chain's "
                  "next member, and no acknowledged write is lost") {
  // Shard i is served by host i mod 3: the head, worker-1, worker-2, the head.
  REQUIRE(eventually(10s, [&] {
    auto log = head->log();
    return primary_of(log, 0) == "head" && primary_of(log, 1) == "worker-1" &&
           primary_of(log, 2) == "worker-2" && primary_of(log, 3) == "head";
  }));
  for (int i = 0; i < 60; ++i)
    put(i);
  // `swarm status` shows where they are served.
  auto placed = status().value().kv_shards;
  REQUIRE(placed.size() == 4);
  CHECK(placed[1].front() == "worker-1");
  CHECK(placed[1].size() == 2);
  // The workers' shards took their writes (a shard heading a chain says so as it starts).
  CHECK(w1->log().find("key-value shard 1:") != std::string::npos);
  CHECK(w2->log().find("key-value shard 2:") != std::string::npos);

  // worker-1 dies at once after the last answer: shard 1 goes to the next member of its
  // chain, which holds every write worker-1 acknowledged. Writes made meanwhile wait for
  // it, then land.
  w1->kill_now();
  auto longest = 0us;
  for (int i = 60; i < 90; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    put(i);
    longest = std::max(longest, std::chrono::duration_cast<std::chrono::microseconds>(
                                    std::chrono::steady_clock::now() - t0));
  }
  MESSAGE("longest write while a shard's node died: " << longest.count() << " us");
  auto took_over = primary_of(head->log(), 1);
  CHECK(took_over != "worker-1");
  CHECK_FALSE(took_over.empty());
  for (int i = 0; i < 90; ++i)
    CHECK(rt->kv_get(key(i)).value() == value(i));
  REQUIRE(rt->kv_erase(key(1)));
  CHECK_FALSE(rt->kv_get(key(1)).value());

  // worker-1 comes back empty: a member of shard 1's chain first, then its primary
  // again, recovering the rows from the node that served it meanwhile.
  w1 = start("worker-1", "worker-1-2.log");
  REQUIRE(eventually(20s, [&] { return primary_of(head->log(), 1) == "worker-1"; }));
  for (int i = 0; i < 90; ++i)
    CHECK(rt->kv_get(key(i)).value() ==
          (i == 1 ? std::nullopt : std::optional{value(i)}));
  put(90);
  CHECK(rt->kv_get(key(90)).value() == value(90));
}

TEST_CASE_FIXTURE(
    spread_cluster,
    "a frozen worker's key-value shard fails over once it is found dead, and "
    "thawed it serves none of it until the head places it there again") {
  for (int i = 0; i < 40; ++i)
    put(i);
  // Frozen, its connections stay open: it is found dead by its silence (1 s here).
  w1->freeze();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 40; i < 60; ++i)
    put(i);
  MESSAGE("writes while worker-1 was frozen took "
          << std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::steady_clock::now() - t0)
                 .count()
          << " ms");
  CHECK(primary_of(head->log(), 1) != "worker-1");
  // Thawed, it learns it was found dead and joins again; its old copy answers nothing
  // until the head makes it a member and then the primary again.
  w1->thaw();
  for (int i = 0; i < 60; ++i)
    CHECK(rt->kv_get(key(i)).value() == value(i));
  REQUIRE(eventually(30s, [&] { return primary_of(head->log(), 1) == "worker-1"; }));
  for (int i = 60; i < 70; ++i)
    put(i);
  for (int i = 0; i < 70; ++i)
    CHECK(rt->kv_get(key(i)).value() == value(i));
}
