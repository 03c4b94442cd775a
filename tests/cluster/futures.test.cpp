// Continuations and combinators on futures of work run on other nodes.

#include <doctest/doctest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "tests/cluster/three_nodes.hpp"

using namespace std::chrono_literals;
using swarm::cluster_test::three_nodes;

TEST_CASE("a continuation of work done on another node runs in this process once its "
          "result is in, and when_any names the first of several nodes to answer") {
  three_nodes c;
  auto where = c.app.find_function<std::string()>("where").value();
  auto nap = c.app.find_function<int(const std::string&, int)>("nap_pid").value();
  auto add = c.app.find_function<int(int, int)>("add").value();
  std::atomic<int> ran_here{0};
  auto remote = c.rt->submit(c.on("worker-1"), where);
  auto then = c.rt->then(remote, [&ran_here](const std::string& node) {
    ++ran_here;
    return "ran on " + node;
  });
  CHECK(then.get(20s).value() == "ran on worker-1");
  CHECK(ran_here == 1);

  std::vector<swarm::object_ref<int>> refs{
      c.rt->submit(c.on("worker-1"), nap, c.dir + "/mark", 1500),
      c.rt->submit(c.on("worker-2"), add, 2, 3)};
  CHECK(c.rt->when_any(refs).get(20s).value() == 1);
  CHECK(refs[1].get(1s).value() == 5);
  CHECK_FALSE(refs[0].ready());
  CHECK(c.rt->when_all(refs).get(20s).value() == std::vector<int>{c.w1->pid(), 5});
}

TEST_CASE("a task running on another node is cancelled there: it stops, its future fails "
          "with cancelled, and its node is free again") {
  three_nodes c;
  auto spin = c.app.find_function<int(int)>("until_cancelled").value();
  auto add = c.app.find_function<int(int, int)>("add").value();
  auto r = c.rt->submit(c.on("worker-1"), spin, 60000);
  // Bounded: it runs there within 10 s.
  bool running = false;
  for (int i = 0; i < 200 && !running; ++i) {
    auto rows = swarm::list_cluster(c.cfg, "tasks", "worker-1", 5s);
    running = rows && !rows->empty() && rows->front().state == "running";
    if (!running) std::this_thread::sleep_for(50ms);
  }
  REQUIRE(running);
  CHECK(c.rt->cancel(r));
  auto got = r.get(10s);
  REQUIRE_FALSE(got);
  CHECK(got.err().code == swarm::errc::cancelled);
  // worker-1 has one CPU: a task there runs once the cancelled one stopped.
  CHECK(c.rt->submit(c.on("worker-1"), add, 1, 2).get(10s).value() == 3);
}
