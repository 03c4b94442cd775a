// A node that stops, over the fake network: what it holds for other nodes goes to them
// before it does.

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "tests/actors/node/fake_cluster.hpp"

using namespace std::chrono_literals;
using namespace swarm;
using namespace swarm::fake_test;

TEST_CASE("a worker that stops while the owner of its result still pulls it waits for "
          "the pull to end: the result is read, and its task does not run again") {
  fake_cluster c;
  auto blob = c.app.find_function<std::vector<uint8_t>(int)>("blob").value();
  auto submits = std::make_shared<std::atomic<int>>(0);
  auto handed = std::make_shared<std::atomic<int>>(0);
  c.net.drop_if([=](auto& from, auto&, auto& m) {
    if (is<wire_msg::task_submit>(m)) ++*submits;
    if (from == "worker-1" && is<wire_msg::objects_hand_over>(m)) ++*handed;
    return false;
  });
  // worker-1's chunks to the head wait: the owner's pull of the result is in flight.
  c.net.hold_if([](auto& from, auto& to, auto& m) {
    return from == "worker-1" && to == "head" && is<wire_msg::object_chunk>(m);
  });
  auto big = c.driver->submit(c.on("worker-1"), blob, 1 << 20);
  REQUIRE(fake_cluster::eventually([&] { return c.net.stats().held > 0; }));
  // The chunks go once worker-1, stopping, has handed its result over. Before hand-overs
  // its stop failed the pull, and the task pinned there failed with it.
  std::thread release{[&] {
    if (fake_cluster::eventually([&] { return *handed > 0; }, 10s)) c.net.heal();
  }};
  c.w1.reset();
  release.join();
  auto got = big.get(10s);
  REQUIRE_MESSAGE(got, got.err().message);
  CHECK(got->size() == size_t{1} << 20);
  CHECK((*got)[300] == 300 % 256);
  CHECK(*handed == 1);
  CHECK(*submits == 1);
}
