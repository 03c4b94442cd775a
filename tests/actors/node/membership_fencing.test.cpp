// The membership actor: fencing the life of a node the head found dead, clients that come
// back, and heartbeats from nodes that have not joined.

#include "tests/actors/node/membership_fixture.hpp"

using namespace std::chrono_literals;
using namespace swarm::actors;
using namespace swarm::membership_test;
namespace wire_msg = swarm::wire_msg;

TEST_CASE_FIXTURE(fixture, "a client found dead comes back with a heartbeat on a "
                           "connection that took over") {
  start("head", {"head", "w1"});
  port.open.insert("client-1");
  auto c = node("client-1");
  c.client = true;
  caf::anon_send(m, join_atom::value, c);
  sched.run();
  caf::anon_send(m, down_atom::value, std::string{"client-1"}, std::string{"reset"});
  sched.run();
  REQUIRE_FALSE(alive("client-1"));
  heartbeat("client-1"); // it reconnected before its old connection's close was seen
  CHECK(alive("client-1"));
  CHECK(port.sent_to<wire_msg::node_fenced>("client-1") == 0);
}

TEST_CASE_FIXTURE(fixture, "the life of a node the head found dead is fenced: its "
                           "heartbeats and joins are answered so, and it comes back only "
                           "as a new life") {
  start("head", {"head", "w1"}, 2);
  join("w1"); // life 0
  caf::anon_send(m, down_atom::value, std::string{"w1"}, std::string{"reset"});
  sched.run();
  REQUIRE_FALSE(alive("w1"));
  CHECK(port.has("chain head"));
  heartbeat("w1"); // thawed, or its network back: its work runs elsewhere now
  CHECK_FALSE(alive("w1"));
  REQUIRE(port.sent_to<wire_msg::node_fenced>("w1") == 1);
  auto told = std::get<wire_msg::node_fenced>(port.sent.back().second);
  CHECK(told.incarnation == 0);
  CHECK(told.reason == "the head found node 'w1' dead: reset");
  caf::anon_send(m, join_atom::value, node("w1")); // the same life joins again
  sched.run();
  CHECK_FALSE(alive("w1"));
  CHECK(port.sent_to<wire_msg::node_fenced>("w1") == 2);
  heartbeat("w1", 7); // the new life's heartbeat may come before its join
  CHECK_FALSE(alive("w1"));
  auto next = node("w1");
  next.incarnation = 7;
  caf::anon_send(m, join_atom::value, next);
  sched.run();
  CHECK(alive("w1"));
  CHECK(view.get()->at("w1").info.incarnation == 7);
  heartbeat("w1", 7);
  pass(500ms); // the next tick puts it back in the chain
  CHECK(port.has("chain head,w1"));
  CHECK(alive("w1"));
  CHECK(port.sent_to<wire_msg::node_fenced>("w1") == 2);
}

TEST_CASE_FIXTURE(fixture,
                  "a node silent past node_timeout is fenced too, and a restarted "
                  "process's heartbeat waits for its join") {
  start("head", {"head", "w1"});
  join("w1");
  pass(2500ms);
  REQUIRE_FALSE(alive("w1"));
  heartbeat("w1");
  REQUIRE(port.sent_to<wire_msg::node_fenced>("w1") == 1);
  CHECK(std::get<wire_msg::node_fenced>(port.sent.back().second).reason ==
        "the head found node 'w1' dead: no heartbeat for 2000 ms");
  heartbeat("w1", 9); // another process under the name, not joined yet
  CHECK_FALSE(alive("w1"));
  CHECK(port.sent_to<wire_msg::node_fenced>("w1") == 1);
}

TEST_CASE_FIXTURE(fixture, "a worker the head fenced becomes a new life, and heartbeats "
                           "as it asking for the table whole") {
  start("w1", {"head", "w1"});
  port.open.insert("head");
  pass(500ms);
  port.events.clear();
  caf::anon_send(m, fenced_atom::value,
                 wire_msg::node_fenced{5, "the head found node 'w1' dead: old"});
  sched.run();
  CHECK(port.events.empty()); // of another life
  caf::anon_send(m, fenced_atom::value,
                 wire_msg::node_fenced{0, "the head found node 'w1' dead: reset"});
  sched.run();
  REQUIRE(port.events.size() == 1);
  CHECK(port.events[0].rfind("fenced as life ", 0) == 0);
  auto life = std::stoull(port.events[0].substr(15));
  CHECK(life > 0);
  CHECK(port.events[0].find(": the head found node 'w1' dead: reset") !=
        std::string::npos);
  pass(500ms);
  auto hb = std::get<wire_msg::heartbeat>(port.sent.back().second);
  CHECK(hb.incarnation == life);
  CHECK(hb.needs_table);
}

TEST_CASE_FIXTURE(fixture, "a heartbeat from a node that never joined is ignored, and "
                           "its connection cut so that it joins again") {
  start("head", {"head", "w1"});
  heartbeat("w1");
  CHECK(view.get()->count("w1") == 0);
  CHECK_FALSE(port.has("record w1 alive"));
  pass(1000ms);
  heartbeat("w1"); // its join may still come
  CHECK_FALSE(port.has("disconnect w1: node 'w1' sent heartbeats for 2000 ms but has not "
                       "joined this head: join again"));
  pass(1000ms);
  heartbeat("w1");
  CHECK(port.has("disconnect w1: node 'w1' sent heartbeats for 2000 ms but has not "
                 "joined this head: join again"));
  CHECK(view.get()->count("w1") == 0);
}

TEST_CASE_FIXTURE(
    fixture,
    "the head records a lost node dead and moves the chain before its work fails over") {
  start("head", {"head", "w1", "w2"}, 2);
  join("w1");
  join("w2");
  CHECK(port.has("chain head,w1"));
  port.events.clear();
  caf::anon_send(m, down_atom::value, std::string{"w1"}, std::string{"connection reset"});
  sched.run();
  CHECK(port.events ==
        std::vector<std::string>{"record w1 dead", "chain head,w2", "lost w1"});
  CHECK_FALSE(alive("w1"));
}
