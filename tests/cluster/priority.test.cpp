// Task priorities across node processes: a high-priority task runs on a busy node before
// the lower ones queued there, whichever node sent it.

#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include "tests/cluster/three_nodes.hpp"

using namespace std::chrono_literals;
using swarm::cluster_test::eventually;
using swarm::cluster_test::three_nodes;

namespace {

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in{path};
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    out.push_back(line);
  return out;
}

} // namespace

TEST_CASE(
    "a high-priority task sent to a busy node by another node runs there before the "
    "lower ones queued before it") {
  three_nodes c;
  auto mark =
      c.app.find_function<int(const std::string&, const std::string&, int)>("mark_nap")
          .value();
  auto mark_on =
      c.app
          .find_function<swarm::object_ref<int>(const std::string&, const std::string&,
                                                int, const std::string&, int)>(
              "mark_nap_on")
          .value();
  auto order = c.dir + "/order";
  // worker-1 has one CPU: low0 runs, low1-3 wait there (queued or pipelined).
  std::vector<swarm::object_ref<int>> done;
  done.push_back(c.rt->submit(c.on("worker-1"), mark, order, "low0", 600));
  REQUIRE(eventually(10s, [&] { return lines_of(order).size() == 1; }));
  for (auto label : {"low1", "low2", "low3"})
    done.push_back(c.rt->submit(c.on("worker-1"), mark, order, label, 50));
  // Bounded: the lows reach worker-1 over loopback well within this.
  std::this_thread::sleep_for(200ms);
  // Sent from worker-2, at priority 10.
  auto high = c.rt->submit(c.on("worker-2"), mark_on, order, "high", 10, "worker-1", 10);
  REQUIRE_MESSAGE(high.get(20s), "the high-priority task");
  for (auto& d : done)
    REQUIRE(d.get(20s));
  CHECK(lines_of(order) ==
        std::vector<std::string>{"low0", "high", "low1", "low2", "low3"});
}

TEST_CASE("a latency-critical call and task reach another node and answer beside a "
          "thousand plain calls queued to it, which all run once") {
  three_nodes c;
  auto cls = c.app.find_actor_type<swarm::cluster_test::counter>("counter").value();
  swarm::actor_options o;
  o.node = "worker-1";
  auto plain = c.rt->spawn(o, cls, 0);
  auto urgent = plain.latency_critical();
  std::vector<swarm::object_ref<int>> queued;
  for (int i = 0; i < 1000; ++i)
    queued.push_back(plain.call(&swarm::cluster_test::counter::add, 1));
  auto fast = urgent.call(&swarm::cluster_test::counter::add, 1000);
  auto pid = c.app.find_function<int()>("pid").value();
  swarm::task_options critical = c.on("worker-1");
  critical.latency_critical = true;
  auto where = c.rt->submit(critical, pid);
  auto got = fast.get(20s);
  REQUIRE_MESSAGE(got, got.err().message);
  CHECK(*got >= 1000);
  CHECK(where.get(20s).value() == c.w1->pid());
  for (auto& q : queued)
    REQUIRE(q.get(20s));
  CHECK(plain.call(&swarm::cluster_test::counter::add, 0).get(20s).value() == 2000);
}

TEST_CASE("the head places spilled work by what it would wait behind at its priority: a "
          "high-priority task goes to the node busy only with lower ones") {
  three_nodes c;
  auto mark =
      c.app.find_function<int(const std::string&, const std::string&, int)>("mark_nap")
          .value();
  auto pid = c.app.find_function<int()>("pid").value();
  auto order = c.dir + "/order";
  // worker-1: 30 lows of 50 ms; worker-2: 3 tasks of priority 10, of 300 ms.
  std::vector<swarm::object_ref<int>> done;
  for (int i = 0; i < 30; ++i)
    done.push_back(c.rt->submit(c.on("worker-1"), mark, order, "low", 50));
  auto busy_high = c.on("worker-2");
  busy_high.priority = 10;
  for (int i = 0; i < 3; ++i)
    done.push_back(c.rt->submit(busy_high, mark, order, "w2", 300));
  // The head's table shows both loads (heartbeats every 100 ms).
  auto count_at = [](const swarm::node_status& n, int32_t priority) {
    for (auto& [p, tasks] : n.by_priority)
      if (p == priority) return tasks;
    return uint32_t{0};
  };
  REQUIRE(eventually(10s, [&] {
    auto s = swarm::cluster_status(c.cfg, 2s);
    if (!s) return false;
    bool w1 = false, w2 = false;
    for (auto& n : s->nodes) {
      w1 |= n.name == "worker-1" && count_at(n, 0) >= 10 && n.queued >= 10;
      w2 |= n.name == "worker-2" && count_at(n, 10) >= 2;
    }
    return w1 && w2;
  }));
  // Only the workers have `slot`: the head spills both to its global scheduler.
  swarm::task_options high;
  high.resources.set("slot", 1);
  high.priority = 10;
  swarm::task_options low = high;
  low.priority = 0;
  auto high_pid = c.rt->submit(high, pid);
  auto low_pid = c.rt->submit(low, pid);
  // worker-1 holds more work, but none of priority 10: the high one passes its lows.
  CHECK(high_pid.get(20s).value() == c.w1->pid());
  size_t lows_done = 0;
  for (auto& line : lines_of(order))
    lows_done += line == "low" ? 1 : 0;
  CHECK(lows_done < 30);
  // A low one would wait behind everything: worker-2 has less.
  CHECK(low_pid.get(20s).value() == c.w2->pid());
  for (auto& d : done)
    REQUIRE(d.get(30s));
}

TEST_CASE("calls waiting for an actor on another node run highest priority first, "
          "whichever node made them") {
  three_nodes c;
  auto cls = c.app.find_actor_type<swarm::cluster_test::call_log>("call_log").value();
  auto append_at =
      c.app
          .find_function<int(swarm::actor_handle<swarm::cluster_test::call_log>, int,
                             int)>("append_at")
          .value();
  swarm::actor_options o;
  o.node = "worker-1";
  auto log = c.rt->spawn(o, cls);
  auto started = c.dir + "/started", open = c.dir + "/open";
  auto held = log.call(&swarm::cluster_test::call_log::hold, started, open);
  REQUIRE(eventually(10s, [&] { return std::ifstream{started}.good(); }));
  // Behind `hold`: three plain calls from here, priority 2 from here, priority 5 from
  // worker-2, then a plain one from here.
  for (int i = 1; i <= 3; ++i)
    log.call(&swarm::cluster_test::call_log::append, i);
  log.priority(2).call(&swarm::cluster_test::call_log::append, 50);
  auto sent = c.rt->submit(c.on("worker-2"), append_at, log, 100, 5);
  REQUIRE(sent.get(20s).value() == 100);
  auto after = log.call(&swarm::cluster_test::call_log::append, 4);
  // Bounded: the calls reach worker-1 over loopback well within this.
  std::this_thread::sleep_for(200ms);
  std::ofstream{open} << "open";
  CHECK(held.get(20s).value());
  CHECK(after.get(20s).value() == std::vector<int>{100, 50, 1, 2, 3, 4});
}
