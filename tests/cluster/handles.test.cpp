// Actor handles as values across real node processes.

#include <doctest/doctest.h>

#include <string>
#include <thread>

#include "tests/cluster/three_nodes.hpp"

using namespace std::chrono_literals;
using swarm::cluster_test::relay;
using swarm::cluster_test::route;
using swarm::cluster_test::three_nodes;

namespace {

swarm::actor_handle<relay> relay_on(three_nodes& c, const std::string& node) {
  swarm::actor_options o;
  o.node = node;
  return c.rt->spawn(o, c.app.find_actor_type<relay>("relay").value());
}

} // namespace

TEST_CASE("a stage handed its successor's handle across two nodes calls it there, "
          "blocking or async, and gives the handle back as a result") {
  three_nodes c;
  auto first = relay_on(c, "worker-1");
  auto second = relay_on(c, "worker-2");
  REQUIRE(first.call(&relay::link, second).get(20s));
  CHECK(first.call(&relay::pass, std::string{"head"}).get(20s).value() ==
        "head>worker-1>worker-2");
  // The same without a thread waiting at each stage: each returns the next's future.
  CHECK(first.call(&relay::hand_on, std::string{"async"}).get(20s).value() ==
        "async>worker-1>worker-2");
  // The handle worker-1 holds, back on the head: it still reaches worker-2's actor.
  auto back = first.call(&relay::next).get(20s).value();
  REQUIRE(back.valid());
  CHECK(back.call(&relay::pass, std::string{"again"}).get(20s).value() ==
        "again>worker-2");
}

TEST_CASE("a task returns the handle of an actor it made, which outlives the task") {
  three_nodes c;
  auto make = c.app.find_function<swarm::actor_handle<relay>()>("make_relay").value();
  auto made = c.rt->submit(c.on("worker-2"), make).get(20s).value();
  REQUIRE(made.valid());
  CHECK(made.call(&relay::pass, std::string{"a"}).get(20s).value() == "a>worker-2");
  // Handed on to a stage on a third node, and reached from there.
  auto first = relay_on(c, "worker-1");
  REQUIRE(first.call(&relay::link, made).get(20s));
  CHECK(first.call(&relay::pass, std::string{"b"}).get(20s).value() ==
        "b>worker-1>worker-2");
}

TEST_CASE("a handle inside a user type reaches a task on another node, and one to a "
          "killed actor fails its calls there with the reason") {
  three_nodes c;
  auto follow = c.app.find_function<std::string(const route&)>("follow").value();
  auto stage = relay_on(c, "worker-1");
  CHECK(c.rt->submit(c.on("worker-2"), follow, route{"r", stage}).get(20s).value() ==
        "r>worker-1");
  c.rt->kill(stage);
  // The kill travels head to worker-1, the call worker-2 to worker-1: it may overtake.
  auto late = c.rt->submit(c.on("worker-2"), follow, route{"late", stage}).get(20s);
  for (int i = 0; i < 100 && late; ++i) {
    std::this_thread::sleep_for(50ms);
    late = c.rt->submit(c.on("worker-2"), follow, route{"late", stage}).get(20s);
  }
  REQUIRE_FALSE(late);
  CHECK(late.err().message.find("actor_died") != std::string::npos);
}
