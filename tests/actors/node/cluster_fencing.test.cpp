// A node the head found dead and fenced: what it ran for others in that life stops.

#include <doctest/doctest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "tests/actors/node/fake_cluster.hpp"

using namespace swarm::fake_test;

namespace {

size_t lines_of(const std::string& path, const std::string& label) {
  std::ifstream in{path};
  size_t n = 0;
  for (std::string line; std::getline(in, line);)
    n += line == label;
  return n;
}

} // namespace

TEST_CASE("tasks other nodes placed on a node the head found dead do not run there once "
          "it is fenced") {
  fake_cluster c;
  auto nap =
      c.app.find_function<int(const std::string&, const std::string&, int)>("mark_nap")
          .value();
  auto order = "/tmp/swarm-fencing-" + std::to_string(::getpid()) + ".txt";
  std::remove(order.c_str());
  // One CPU: "long" runs, the others wait in worker-1's queue behind it.
  // Pinned: their owner fails them when the node is lost (a task runs again only
  // elsewhere), so any run of theirs after that is the stale life's.
  auto on_1 = fake_cluster::on("worker-1");
  auto first = c.driver->submit(on_1, nap, order, "long", 3000);
  REQUIRE(fake_cluster::eventually([&] { return lines_of(order, "long") == 1; }));
  auto b = c.driver->submit(on_1, nap, order, "b", 10);
  auto d = c.driver->submit(on_1, nap, order, "d", 10);
  // Cut off (its messages held) until the head finds it dead; then back, and fenced.
  std::atomic<bool> cut{false};
  c.net.hold_if([&cut](auto& from, auto& to, auto&) {
    return cut && (from == "worker-1" || to == "worker-1");
  });
  REQUIRE(fake_cluster::eventually([&] {
    auto s = c.w1->stats();
    return s.queued_tasks + s.dispatched_tasks == 3;
  }));
  cut = true;
  REQUIRE(fake_cluster::eventually([&] { return c.head->alive_nodes().size() == 2; }));
  cut = false;
  c.net.release_held();
  for (auto* r : {&b, &d, &first}) {
    auto got = r->get(20s);
    REQUIRE_FALSE(got);
    CHECK(got.err().code == swarm::errc::worker_died);
  }
  // "long" ends there 3 s after it began; what was queued behind it was cancelled at
  // the fence, and never starts.
  auto began = std::chrono::steady_clock::now();
  REQUIRE(
      fake_cluster::eventually([&] { return c.w1->stats().running_tasks == 0; }, 10s));
  std::this_thread::sleep_for(300ms);
  CHECK(std::chrono::steady_clock::now() - began < 10s);
  CHECK(lines_of(order, "long") == 1);
  CHECK(lines_of(order, "b") == 0);
  CHECK(lines_of(order, "d") == 0);
  std::remove(order.c_str());
}
