// Where objects are read from across real node processes: copies, and the nodes that
// hold them.

#include <doctest/doctest.h>

#include <map>
#include <numeric>
#include <string>

#include "tests/cluster/three_nodes.hpp"

using namespace std::chrono_literals;
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

} // namespace

TEST_CASE("a node reading an object another node read pulls parts of it from that "
          "reader too, and reads its own copy again without a pull") {
  three_nodes c;
  auto read =
      c.app.find_function<std::vector<int64_t>(const std::vector<uint8_t>&)>("read_blob")
          .value();
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
