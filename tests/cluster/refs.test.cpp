// Object refs as values across real node processes: the borrower protocol.

#include <doctest/doctest.h>

#include <string>
#include <thread>
#include <vector>

#include "tests/cluster/three_nodes.hpp"

using namespace std::chrono_literals;
using swarm::object_ref;
using swarm::cluster_test::keeper;
using swarm::cluster_test::three_nodes;

namespace {

using refs = std::vector<object_ref<int>>;

// What `node` keeps for borrowers and borrows, once they equal `want` (within 10 s).
std::vector<uint64_t> counts_on(three_nodes& c, const std::string& node,
                                std::vector<uint64_t> want) {
  auto f = c.app.find_function<std::vector<uint64_t>()>("borrow_counts").value();
  std::vector<uint64_t> got;
  for (int i = 0; i < 200; ++i) {
    got = c.rt->submit(c.on(node), f).get(20s).value();
    if (got == want) break;
    std::this_thread::sleep_for(50ms);
  }
  return got;
}

} // namespace

TEST_CASE("a borrowed ref outlives its task: an actor on another node keeps refs the "
          "driver dropped, reads them later, and the owner frees them once it lets go") {
  three_nodes c;
  swarm::actor_options o;
  o.node = "worker-1";
  o.dedicated_thread = true; // its `sum` waits for the objects
  auto k = c.rt->spawn(o, c.app.find_actor_type<keeper>("keeper").value());
  {
    refs mine{c.rt->put(1), c.rt->put(2), c.rt->put(3)};
    REQUIRE(k.call(&keeper::keep, mine).get(20s));
  }
  // The call returned only once the head knew of worker-1's borrows.
  CHECK(c.rt->stats().lent_objects == 3);
  CHECK(k.call(&keeper::sum).get(20s).value() == 6);
  CHECK(counts_on(c, "worker-1", {0, 3}) == std::vector<uint64_t>{0, 3});
  REQUIRE(k.call(&keeper::drop).get(20s));
  CHECK(counts_on(c, "worker-1", {0, 0}) == std::vector<uint64_t>{0, 0});
  for (int i = 0; i < 200 && c.rt->stats().lent_objects > 0; ++i)
    std::this_thread::sleep_for(50ms);
  CHECK(c.rt->stats().lent_objects == 0);
}

TEST_CASE("a task returns refs of objects it made on its node, the driver reads them "
          "there and lends them on to a third node, and they are freed when all let go") {
  three_nodes c;
  auto make = c.app.find_function<refs(int)>("make_refs").value();
  auto sum_on = c.app.find_function<object_ref<int>(refs, std::string)>("sum_on").value();
  {
    auto made = c.rt->submit(c.on("worker-2"), make, 4).get(20s).value();
    REQUIRE(made.size() == 4);
    int sum = 0;
    for (auto& r : made)
      sum += r.get(20s).value();
    CHECK(sum == 10);
    // worker-1 borrows them from worker-2 through a task the head sends there.
    CHECK(c.rt->submit(c.on("worker-1"), sum_on, made, std::string{"worker-1"})
              .get(20s)
              .value() == 10);
    CHECK(counts_on(c, "worker-2", {4, 0})[0] == 4);
  }
  // The driver's refs went: worker-2 keeps nothing for borrowers any more.
  CHECK(counts_on(c, "worker-2", {0, 0}) == std::vector<uint64_t>{0, 0});
  CHECK(counts_on(c, "head", {0, 0}) == std::vector<uint64_t>{0, 0});
}

TEST_CASE("a ref of a large object inside a value is pulled by the node that reads it, "
          "and a ref of an object not made yet resolves there once it is") {
  three_nodes c;
  auto blob = c.app.find_function<std::vector<uint8_t>(int)>("blob").value();
  auto sizes =
      c.app
          .find_function<std::vector<int>(
              const std::vector<object_ref<std::vector<uint8_t>>>&)>("blob_sizes")
          .value();
  std::vector<object_ref<std::vector<uint8_t>>> big{
      c.rt->put(std::vector<uint8_t>(3 << 20, 7)),
      c.rt->submit(c.on("worker-2"), blob, 1 << 20)};
  CHECK(c.rt->submit(c.on("worker-1"), sizes, big).get(20s).value() ==
        std::vector<int>{3 << 20, 1 << 20});
  auto nap = c.app.find_function<int(const std::string&, int)>("nap_pid").value();
  auto sum_of = c.app.find_function<int(const refs&)>("sum_of").value();
  auto later = c.rt->submit(c.on("head"), nap, c.dir + "/nap", 300);
  auto sum = c.rt->submit(c.on("worker-1"), sum_of, refs{later, c.rt->put(1)});
  CHECK(sum.get(20s).value() == later.get(20s).value() + 1);
}
