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
  caf::anon_send(m, join_atom::value, wire_msg::join{c});
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
  caf::anon_send(m, join_atom::value,
                 wire_msg::join{node("w1")}); // the same life joins again
  sched.run();
  CHECK_FALSE(alive("w1"));
  CHECK(port.sent_to<wire_msg::node_fenced>("w1") == 2);
  heartbeat("w1", 7); // the new life's heartbeat may come before its join
  CHECK_FALSE(alive("w1"));
  auto next = node("w1");
  next.incarnation = 7;
  caf::anon_send(m, join_atom::value, wire_msg::join{next});
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

namespace {

// The join of `name`'s life `life`, holding the table of the head's life `head_life`,
// which shows the lives `dead` dead.
wire_msg::join rejoin(const std::string& name, uint64_t life, uint64_t head_life,
                      std::vector<wire_msg::node_life> dead = {}) {
  wire_msg::join j{node(name)};
  j.node.incarnation = life;
  j.head_life = head_life;
  j.dead = std::move(dead);
  return j;
}

} // namespace

TEST_CASE_FIXTURE(fixture,
                  "a head started again holds the join of a node that followed "
                  "an earlier head until its file's nodes joined, and fences the "
                  "life the earlier head found dead") {
  start("head", {"head", "w1", "w2"});
  port.open = {"w1", "w2"};
  caf::anon_send(m, join_atom::value, rejoin("w1", 7, 400));
  sched.run();
  CHECK_FALSE(alive("w1")); // held: w2 may know a verdict on it
  heartbeat("w1", 7);       // its heartbeats wait with it
  CHECK_FALSE(alive("w1"));
  CHECK(port.sent_to<wire_msg::node_fenced>("w1") == 0);
  caf::anon_send(m, join_atom::value, rejoin("w2", 8, 400, {{"w1", 7}}));
  sched.run();
  CHECK(alive("w2"));
  CHECK_FALSE(alive("w1"));
  CHECK_FALSE(port.has("record w1 alive"));
  REQUIRE(port.sent_to<wire_msg::node_fenced>("w1") == 1);
  auto told = std::find_if(port.sent.begin(), port.sent.end(), [](auto& s) {
    return std::holds_alternative<wire_msg::node_fenced>(s.second);
  });
  CHECK(std::get<wire_msg::node_fenced>(told->second).reason ==
        "the head found node 'w1' dead: an earlier head found it dead (node 'w2' saw it "
        "so)");
  caf::anon_send(m, join_atom::value, rejoin("w1", 9, 400)); // its new life
  sched.run();
  CHECK(alive("w1"));
  CHECK(view.get()->at("w1").info.incarnation == 9);
}

TEST_CASE_FIXTURE(fixture, "a life a head started again took back before it knew the "
                           "earlier head's verdict is found dead as soon as a join shows "
                           "it") {
  start("head", {"head", "w1", "w2"}, 2);
  port.open = {"w1", "w2"};
  caf::anon_send(m, join_atom::value, rejoin("w1", 7, 400));
  sched.run();
  pass(2500ms); // the node timeout passed: w2 may never come
  REQUIRE(alive("w1"));
  CHECK(port.has("chain head,w1"));
  port.events.clear();
  caf::anon_send(m, join_atom::value, rejoin("w2", 8, 400, {{"w1", 7}, {"w3", 5}}));
  sched.run();
  CHECK(alive("w2"));
  CHECK_FALSE(alive("w1"));
  CHECK(port.has("record w1 dead"));
  CHECK(port.has("chain head,w2"));
  CHECK(port.has("disconnect w1: an earlier head found it dead (node 'w2' saw it so)"));
  heartbeat("w1", 7);
  CHECK(port.sent_to<wire_msg::node_fenced>("w1") == 1);
  CHECK(view.get()->count("w3") == 0); // a verdict on a node it never saw only fences
}

TEST_CASE_FIXTURE(fixture, "a join of a node that followed this head, or none, is taken "
                           "at once") {
  start("head", {"head", "w1", "w2"});
  port.open = {"w1", "w2"};
  caf::anon_send(m, join_atom::value, rejoin("w1", 7, 0)); // a new process
  sched.run();
  CHECK(alive("w1"));
  // Only a node that followed an earlier head tells this one of verdicts it lacks.
  caf::anon_send(m, join_atom::value, rejoin("w2", 8, 0, {{"w1", 7}}));
  sched.run();
  CHECK(alive("w2"));
  CHECK(alive("w1"));
  caf::anon_send(m, join_atom::value, rejoin("w2", 8, 400, {{"w1", 6}})); // older life
  sched.run();
  CHECK(alive("w1"));
}

TEST_CASE_FIXTURE(fixture, "a node outside the file that joins again as a new life "
                           "before the head dropped its dead row stays in the table") {
  start("head", {"head", "w1"});
  port.open.insert("x");
  auto x = node("x");
  x.owner_index = 3; // joined by the head's address
  caf::anon_send(m, join_atom::value, wire_msg::join{x});
  sched.run();
  caf::anon_send(m, down_atom::value, std::string{"x"}, std::string{"reset"});
  sched.run();
  pass(500ms); // the tick that sends its row as dead; the next drops it
  x.incarnation = 9;
  caf::anon_send(m, join_atom::value, wire_msg::join{x});
  sched.run();
  pass(500ms);
  CHECK(alive("x"));
  CHECK_FALSE(port.has("forget x"));
}

TEST_CASE("a node's join carries the lives its table shows dead and the life of the head "
          "it follows") {
  peer_table t;
  t["head"].info.incarnation = 5;
  t["w1"].info.incarnation = 7;
  t["w1"].info.alive = false;
  t["w2"].info.incarnation = 8;
  t["client-1"].info.client = true; // a client is never fenced
  t["client-1"].info.alive = false;
  t["me"].info.incarnation = 9;
  membership_view view;
  view.publish(std::move(t));
  view.publish_dropped({{"w9", 4}}); // outside the file, dropped once found dead
  auto j = join_of(node("me"), {3, {}}, view, "head");
  CHECK(j.node.name == "me");
  CHECK(j.placement.version == 3);
  CHECK(j.head_life == 5);
  REQUIRE(j.dead.size() == 2);
  CHECK(j.dead[0].name == "w9");
  CHECK(j.dead[0].incarnation == 4);
  CHECK(j.dead[1].name == "w1");
  CHECK(j.dead[1].incarnation == 7);
}

TEST_CASE_FIXTURE(fixture,
                  "a node keeps the lives of the nodes outside the file that the "
                  "head dropped once it found them dead") {
  start("w1", {"head", "w1"});
  wire_msg::node_table whole;
  whole.version = 1;
  auto w9 = node("w9");
  w9.owner_index = 3; // joined by address
  w9.incarnation = 4;
  whole.nodes = {node("head"), w9};
  caf::anon_send(m, table_atom::value, whole);
  sched.run();
  REQUIRE(alive("w9"));
  wire_msg::node_table gone;
  gone.base = 1;
  gone.version = 2;
  gone.removed = {"w9"};
  caf::anon_send(m, table_atom::value, gone);
  sched.run();
  CHECK(view.get()->count("w9") == 0);
  REQUIRE(view.dropped()->size() == 1);
  CHECK(view.dropped()->front().name == "w9");
  CHECK(view.dropped()->front().incarnation == 4);
}
