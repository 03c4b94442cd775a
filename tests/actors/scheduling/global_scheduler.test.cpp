#include <doctest/doctest.h>

#include <caf/all.hpp>
#include <caf/test/dsl.hpp>

#include <optional>
#include <string>

#include "actors/scheduling/global_scheduler.hpp"
#include "actors/scheduling/protocol.hpp"

using namespace swarm::actors;
using swarm::errc;
using swarm::resource_set;

namespace {

resource_set cpus(double n) {
  resource_set r;
  r.set("CPU", n);
  return r;
}

// Steps the head's global scheduler on the test coordinator.
struct fixture : test_coordinator_fixture<> {
  caf::actor g = spawn_global_scheduler(sys);

  ~fixture() override {
    caf::anon_send_exit(g, caf::exit_reason::user_shutdown);
    sched.run();
  }

  void node(const std::string& name, const resource_set& total, uint64_t queued,
            bool alive = true, node_abilities abilities = {},
            swarm::wire_msg::priority_counts by_priority = {}) {
    caf::anon_send(
        g, update_atom::value, name,
        node_report{total, queued, std::move(by_priority), alive, std::move(abilities)});
    sched.run();
  }

  // Where a task demanding `demand` with `inputs` (node, bytes) goes.
  swarm::result<std::string>
  place(const resource_set& demand,
        std::vector<std::pair<std::string, uint64_t>> inputs = {}, work_needs needs = {},
        int32_t priority = 0, std::vector<std::string> avoid = {}) {
    std::optional<swarm::result<std::string>> out;
    placement_request req;
    req.avoid = std::move(avoid);
    req.demand = demand;
    req.needs = std::move(needs);
    req.priority = priority;
    req.input_bytes = std::move(inputs);
    req.then = [&](swarm::result<std::string> r) { out = std::move(r); };
    caf::anon_send(g, place_atom::value, std::move(req));
    sched.run();
    REQUIRE(out);
    return *out;
  }
};

} // namespace

TEST_CASE_FIXTURE(
    fixture,
    "the global scheduler places a task on the live node with the least queued work") {
  node("head", cpus(2), 5);
  node("w1", cpus(2), 1);
  node("w2", cpus(2), 3);
  CHECK(place(cpus(1)).value() == "w1");
}

TEST_CASE_FIXTURE(fixture, "the global scheduler places a high-priority task where the "
                           "least work of its priority or higher waits") {
  // w1 is busy with 40 low tasks, w2 with 3 high ones.
  node("w1", cpus(1), 40, true, {}, {{0, 40}});
  node("w2", cpus(1), 3, true, {}, {{10, 3}});
  CHECK(place(cpus(1), {}, {}, 10).value() == "w1"); // it passes w1's lows
  CHECK(place(cpus(1), {}, {}, 0).value() == "w2");  // a low waits behind everything
  CHECK(place(cpus(1), {}, {}, 5).value() == "w1");  // w2's highs are ahead of a 5
  // What it placed counts at its priority: a 10 placed on w1 waits behind the first 10.
  CHECK(place(cpus(1), {}, {}, 10).value() == "w1");
  CHECK(place(cpus(1), {}, {}, 10).value() == "w1");
  // 3 of priority 10 on each: the node with less work of any priority wins.
  CHECK(place(cpus(1), {}, {}, 10).value() == "w2");
}

TEST_CASE_FIXTURE(
    fixture,
    "work the global scheduler placed counts against its node until the next heartbeat") {
  node("w1", cpus(2), 0);
  node("w2", cpus(2), 1);
  CHECK(place(cpus(1)).value() == "w1");
  CHECK(place(cpus(1)).value() == "w1"); // w1 now has 1, as w2: the first in order wins
  CHECK(place(cpus(1)).value() == "w2");
  node("w1", cpus(2), 0); // a heartbeat says w1 is idle again
  CHECK(place(cpus(1)).value() == "w1");
}

TEST_CASE_FIXTURE(
    fixture, "the global scheduler places a task where most of its input bytes are") {
  node("w1", cpus(2), 0);
  node("w2", cpus(2), 9);
  CHECK(place(cpus(1), {{"w2", 100 << 20}, {"w1", 1 << 20}}).value() == "w2");
}

TEST_CASE_FIXTURE(fixture, "a demand only dead nodes could hold says they are dead") {
  resource_set gpu;
  gpu.set("GPU", 1);
  node("w1", cpus(2), 0);
  node("gpu-1", gpu, 0, false);
  auto r = place(gpu);
  REQUIRE_FALSE(r);
  CHECK(r.err().code == errc::node_unreachable);
  CHECK(r.err().message.find("'gpu-1'") != std::string::npos);
}

TEST_CASE_FIXTURE(fixture, "a demand no node can hold is infeasible") {
  node("w1", cpus(2), 0);
  auto r = place(cpus(64));
  REQUIRE_FALSE(r);
  CHECK(r.err().code == errc::infeasible);
}

TEST_CASE_FIXTURE(fixture, "a node found dead gets no work until it is alive again") {
  node("w1", cpus(2), 0);
  node("w2", cpus(2), 7);
  node("w1", cpus(2), 0, false);
  CHECK(place(cpus(1)).value() == "w2");
  node("w1", cpus(2), 0, true);
  CHECK(place(cpus(1)).value() == "w1");
}

TEST_CASE_FIXTURE(fixture,
                  "work goes only to nodes that registered its function or actor "
                  "type, and work no node registered fails naming it and the nodes") {
  node("head", cpus(4), 3, true, {{"main_only"}, {}});
  node("w1", cpus(2), 5, true, {{"main_only", "where"}, {"counter"}});
  node("w2", cpus(2), 0, true, {{"main_only"}, {}});
  // w2 is idler, but only w1 can run it.
  CHECK(place(cpus(1), {}, work_needs::function("where")).value() == "w1");
  CHECK(place(cpus(1), {}, work_needs::actor_type("counter")).value() == "w1");
  CHECK(place(cpus(1), {}, work_needs::function("main_only")).value() == "w2");
  auto none = place(cpus(1), {}, work_needs::function("nowhere"));
  REQUIRE_FALSE(none);
  CHECK(none.err().code == errc::unregistered);
  CHECK(none.err().message ==
        "no node of the cluster can run function 'nowhere': it is not registered on "
        "'head', 'w1', 'w2'");
  // Registered only where it does not fit: infeasible, naming the function and the
  // nodes that could hold it but lack it (as a function only the driver registered).
  auto small = place(cpus(3), {}, work_needs::function("where"));
  REQUIRE_FALSE(small);
  CHECK(small.err().code == errc::infeasible);
  CHECK(small.err().message ==
        "demands {CPU: 3} but no node that registered function 'where' has it (w1 "
        "{CPU: 2}), and it is not registered on 'head', 'w2'");
  // Registered only on a dead node: that node is named as dead.
  node("w1", cpus(2), 0, false, {{"where"}, {}});
  CHECK(place(cpus(1), {}, work_needs::function("where")).err().code ==
        errc::node_unreachable);
}

TEST_CASE_FIXTURE(fixture, "a task run again after its owner lost it on a node goes "
                           "elsewhere, and back there only when nothing else fits") {
  node("head", resource_set{}, 0);
  node("w1", cpus(2), 5);
  node("w2", cpus(2), 0);
  node("w3", cpus(8), 9);
  // The least loaded, but where the owner lost it: the next best instead.
  CHECK(place(cpus(1), {}, {}, 0, {"w2"}).value() == "w1");
  CHECK(place(cpus(1), {}, {}, 0, {"w2", "w1"}).value() == "w3");
  // Only the avoided nodes fit: one of them, rather than failing.
  CHECK(place(cpus(4), {}, {}, 0, {"w3"}).value() == "w3");
}

TEST_CASE_FIXTURE(fixture, "work that fits only a node type the autoscaler may start "
                           "waits for such a node, and fails naming why once none may") {
  node("w1", cpus(1), 0);
  caf::anon_send(g, scalable_atom::value, std::vector<resource_set>{cpus(8)},
                 std::string{});
  sched.run();
  std::vector<swarm::result<std::string>> got;
  auto ask = [&](double n) {
    placement_request req;
    req.demand = cpus(n);
    req.then = [&](swarm::result<std::string> r) { got.push_back(std::move(r)); };
    caf::anon_send(g, place_atom::value, std::move(req));
    sched.run();
  };
  ask(4);
  ask(6);
  ask(64); // fits no type either: fails at once
  REQUIRE(got.size() == 1);
  CHECK(got[0].err().code == errc::infeasible);
  std::vector<waiting_demand> waiting;
  self->send(g, waiting_atom::value);
  sched.run();
  self->receive([&](std::vector<waiting_demand>& w) { waiting = std::move(w); },
                caf::after(std::chrono::seconds(5)) >> [] {});
  CHECK(waiting == std::vector<waiting_demand>{cpus(4), cpus(6)});
  node("big-1", cpus(8), 0); // joins: both go there
  REQUIRE(got.size() == 3);
  CHECK(got[1].value() == "big-1");
  CHECK(got[2].value() == "big-1");
  node("big-1", cpus(8), 0, false);
  ask(5);
  CHECK(got.size() == 3);
  caf::anon_send(g, scalable_atom::value, std::vector<resource_set>{},
                 std::string{"the autoscaler could not start a node of type 'big'"});
  sched.run();
  REQUIRE(got.size() == 4);
  CHECK(got[3].err().message.find("; the autoscaler could not start a node of type "
                                  "'big'") != std::string::npos);
}
