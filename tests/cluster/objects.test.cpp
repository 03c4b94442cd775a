// Where objects are read from across real node processes: copies, and the nodes that
// hold them.

#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <numeric>
#include <string>

#include "tests/cluster/three_nodes.hpp"

using namespace std::chrono_literals;
using swarm::cluster_test::eventually;
using swarm::cluster_test::three_nodes;

namespace {

// The bytes `node` pulled of `object` from each node, by the timeline.
std::map<std::string, int64_t> pulled(three_nodes& c, const std::string& node,
                                      const std::string& object) {
  std::map<std::string, int64_t> from;
  auto rows = swarm::list_cluster(c.cfg, "timeline", node, 5s);
  REQUIRE_MESSAGE(rows, rows.err().message);
  for (auto& r : *rows)
    if (r.numbers.at(0) == swarm::timeline_kind::transfer && r.id == object &&
        r.detail.rfind("pulls from ", 0) == 0)
      from[r.detail.substr(11)] += r.numbers.at(4);
  return from;
}

int64_t sum_of(const std::vector<uint8_t>& b) {
  return std::accumulate(b.begin(), b.end(), int64_t{0});
}

using read_blob_fn = swarm::task_fn<std::vector<int64_t>(const std::vector<uint8_t>&)>;

// The test app's `read_blob`: where a blob was read, and its sum.
read_blob_fn read_blob_of(three_nodes& c) {
  return c.app
      .find_function<std::vector<int64_t>(const std::vector<uint8_t>&)>("read_blob")
      .value();
}

} // namespace

TEST_CASE("a node reading an object another node read pulls parts of it from that "
          "reader too, and reads its own copy again without a pull") {
  three_nodes c;
  auto read = read_blob_of(c);
  const int n = 24 << 20; // six chunks
  auto value = swarm::cluster_test::blob(n);
  auto big = c.rt->put(value);
  auto id = big.id().to_string();
  REQUIRE(c.rt->submit(c.on("worker-1"), read, big).get(20s).value().at(1) ==
          sum_of(value));
  auto first = pulled(c, "worker-1", id);
  CHECK(first.size() == 1);
  CHECK(first["head"] >= n);

  REQUIRE(c.rt->submit(c.on("worker-2"), read, big).get(20s).value().at(1) ==
          sum_of(value));
  auto from = pulled(c, "worker-2", id);
  CHECK(from.count("head"));
  CHECK(from.count("worker-1"));
  int64_t total = 0;
  for (auto& [node, bytes] : from)
    total += bytes;
  CHECK(total >= n);

  // Its copy is read there again: nothing more is pulled.
  REQUIRE(c.rt->submit(c.on("worker-2"), read, big).get(20s).value().at(1) ==
          sum_of(value));
  CHECK(pulled(c, "worker-2", id) == from);
}

TEST_CASE("a put kept on two nodes is copied again when one of them is lost, and is read "
          "there without a pull") {
  three_nodes c;
  auto read = read_blob_of(c);
  const int n = 8 << 20;
  auto value = swarm::cluster_test::blob(n);
  auto big = c.rt->put(value, swarm::put_options{2});
  auto id = big.id().to_string();
  // The least busy other node keeps a copy: the workers tie, worker-1 comes first.
  REQUIRE(eventually(20s, [&] { return !pulled(c, "worker-1", id).empty(); }));
  CHECK(pulled(c, "worker-2", id).empty());

  c.w1->kill_now();
  REQUIRE(eventually(20s, [&] { return !pulled(c, "worker-2", id).empty(); }));
  auto kept = pulled(c, "worker-2", id);
  CHECK(kept == std::map<std::string, int64_t>{{"head", kept["head"]}});
  REQUIRE(c.rt->submit(c.on("worker-2"), read, big).get(20s).value().at(1) ==
          sum_of(value));
  CHECK(pulled(c, "worker-2", id) == kept);
}

TEST_CASE("a result kept on two nodes outlives the node that made it without running "
          "again, and is read where its replica is without a pull") {
  three_nodes c;
  auto make =
      c.app.find_function<std::vector<uint8_t>(const std::string&, int)>("counted_blob")
          .value();
  auto read = read_blob_of(c);
  auto runs = c.dir + "/runs";
  auto on_w1 = c.on("worker-1");
  on_w1.replicas = 2;
  const int n = 32 << 20;
  auto r = c.rt->submit(on_w1, make, runs, n);
  auto id = r.id().to_string();
  // Its replica goes to worker-2 (the owner, the head, keeps a copy anyway). Killed as
  // soon as it is there: a pull of the owner's still running goes on from worker-2.
  REQUIRE(eventually(20s, [&] { return !pulled(c, "worker-2", id).empty(); }));
  c.w1->kill_now();
  auto got = r.get(30s);
  REQUIRE_MESSAGE(got, got.err().message);
  CHECK(*got == swarm::cluster_test::blob(n));
  std::ifstream in{runs};
  int lines = 0;
  for (std::string line; std::getline(in, line);)
    ++lines;
  CHECK(lines == 1);

  auto kept = pulled(c, "worker-2", id);
  REQUIRE(c.rt->submit(c.on("worker-2"), read, r).get(20s).value().at(1) ==
          sum_of(swarm::cluster_test::blob(n)));
  CHECK(pulled(c, "worker-2", id) == kept);
}
