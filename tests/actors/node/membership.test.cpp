// The membership actor: joins, heartbeats, verdicts and the node table.

#include "tests/actors/node/membership_fixture.hpp"

using namespace std::chrono_literals;
using namespace swarm::actors;
using namespace swarm::membership_test;
namespace wire_msg = swarm::wire_msg;

TEST_CASE_FIXTURE(fixture,
                  "the head records a joining node alive and sends it the node table") {
  start("head", {"head", "w1"});
  join("w1");
  CHECK(port.has("record w1 alive"));
  CHECK(alive("w1"));
  REQUIRE(port.sent_to<wire_msg::node_table>("w1") == 1);
  auto& first = table_sent(0);
  CHECK(first.base == 0); // whole
  CHECK(first.nodes.size() == 2);
  pass(500ms); // the tick sends its row to all (one change for every join meanwhile)
  CHECK(port.sent_to<wire_msg::node_table>("w1") == 2);
  pass(500ms); // a tick sends nothing while nothing changed
  CHECK(port.sent_to<wire_msg::node_table>("w1") == 2);
}

TEST_CASE_FIXTURE(fixture, "a node that joined by address keeps its row against a second "
                           "join under its name, and joins again once found dead") {
  start("head", {"head"});
  auto joiner = [](uint32_t owner_index, const char* address) {
    auto n = node("j1");
    n.owner_index = owner_index;
    n.address = address;
    n.incarnation = owner_index; // each a process of its own: a life of its own
    return n;
  };
  port.open.insert("j1");
  caf::anon_send(m, join_atom::value, wire_msg::join{joiner(7, "10.0.0.1")});
  sched.run();
  caf::anon_send(m, join_atom::value, wire_msg::join{joiner(9, "10.0.0.2")});
  sched.run();
  auto row = view.get()->at("j1").info;
  CHECK(row.owner_index == 7);
  CHECK(row.address == "10.0.0.1");
  caf::anon_send(m, down_atom::value, std::string{"j1"}, std::string{"closed"});
  sched.run();
  CHECK_FALSE(alive("j1"));
  caf::anon_send(m, join_atom::value, wire_msg::join{joiner(9, "10.0.0.2")});
  sched.run();
  CHECK(alive("j1"));
  CHECK(view.get()->at("j1").info.owner_index == 9);
}

TEST_CASE_FIXTURE(fixture,
                  "each tick the head sends what changed, once for all nodes that "
                  "hold the version before, and whole rows only for new nodes") {
  start("head", {"head", "w1", "w2", "w3"});
  join("w1");
  join("w2");
  // Both place work by the nodes' loads: they get every change (`table_feed`'s tests
  // show the others).
  wire_msg::heartbeat reading;
  reading.wants_load = true;
  caf::anon_send(m, heartbeat_atom::value, std::string{"w1"}, reading);
  caf::anon_send(m, heartbeat_atom::value, std::string{"w2"}, reading);
  sched.run();
  pass(500ms); // their rows go out
  auto version = table_sent(port.sent.size() - 1).version;
  wire_msg::heartbeat busy = reading;
  busy.queued = 4;
  busy.running = 1;
  caf::anon_send(m, heartbeat_atom::value, std::string{"w1"}, busy);
  sched.run();
  port.sent.clear();
  port.sent_all_calls.clear();
  pass(500ms);
  // w1 and w2 hold the version before: one change, sent to both at once.
  REQUIRE(port.sent_all_calls.size() == 1);
  CHECK(port.sent_all_calls[0] == std::vector<std::string>{"w1", "w2"});
  REQUIRE(port.sent.size() == 2);
  auto& delta = table_sent(0);
  CHECK(delta.base == version);
  CHECK(delta.version == version + 1);
  CHECK(delta.nodes.empty()); // no row whole
  REQUIRE(delta.changes.size() == 1);
  CHECK(delta.changes[0].name == "w1");
  CHECK(delta.changes[0].queued == 4);
  CHECK(delta.changes[0].running == 1);
  // A node joining gets the table whole at once; the others only its row, at the tick.
  port.sent.clear();
  port.sent_all_calls.clear();
  join("w3");
  REQUIRE(port.sent.size() == 1);
  CHECK(port.sent[0].first == "w3");
  CHECK(table_sent(0).base == 0);
  CHECK(table_sent(0).nodes.size() == 4);
  port.sent.clear();
  pass(500ms);
  REQUIRE(port.sent_to<wire_msg::node_table>("w1") == 1);
  REQUIRE(port.sent_to<wire_msg::node_table>("w2") == 1);
  for (auto& [to, msg] : port.sent) {
    auto& t = std::get<wire_msg::node_table>(msg);
    CHECK(t.base == version + 1);
    REQUIRE(t.nodes.size() == 1);
    CHECK(t.nodes[0].name == "w3");
  }
  // A heartbeat that changes nothing changes nothing.
  port.sent.clear();
  caf::anon_send(m, heartbeat_atom::value, std::string{"w1"}, busy);
  sched.run();
  pass(500ms);
  CHECK(port.sent.empty());
}

TEST_CASE_FIXTURE(fixture,
                  "the head sends the whole table to a node that missed a change "
                  "and asks for it in a heartbeat") {
  start("head", {"head", "w1"});
  join("w1");
  port.sent.clear();
  wire_msg::heartbeat ask;
  ask.needs_table = true;
  caf::anon_send(m, heartbeat_atom::value, std::string{"w1"}, ask);
  sched.run();
  pass(500ms);
  REQUIRE(port.sent_to<wire_msg::node_table>("w1") == 1);
  CHECK(table_sent(0).base == 0);
  CHECK(table_sent(0).nodes.size() == 2);
}

TEST_CASE_FIXTURE(
    fixture,
    "the head finds a silent node dead after node_timeout and closes its connection") {
  start("head", {"head", "w1"});
  join("w1");
  pass(1900ms);
  CHECK(alive("w1"));
  pass(600ms);
  CHECK_FALSE(alive("w1"));
  CHECK(port.has("record w1 dead"));
  CHECK(port.has("disconnect w1: no heartbeat for 2000 ms"));
}

TEST_CASE_FIXTURE(fixture, "a node the head finds dead keeps none of its last counts") {
  start("head", {"head", "w1"});
  join("w1");
  swarm::wire_msg::heartbeat beat;
  beat.queued = 5;
  beat.running = 2;
  beat.store.bytes = 1000;
  caf::anon_send(m, heartbeat_atom::value, std::string{"w1"}, beat);
  sched.run();
  pass(500ms);
  REQUIRE(view.get()->at("w1").info.queued == 5);
  pass(2500ms);
  REQUIRE_FALSE(alive("w1"));
  auto& dead = view.get()->at("w1").info;
  CHECK(dead.queued == 0);
  CHECK(dead.running == 0);
  CHECK(dead.store.bytes == 0);
  CHECK(dead.total == node("w1").total); // what it is stays
}

TEST_CASE_FIXTURE(fixture,
                  "a node that says it is stopping gets no more work from the "
                  "head or the other nodes, yet stays in the table until it goes") {
  start("head", {"head", "w1", "w2"});
  join("w1");
  join("w2");
  pass(500ms); // their rows go out
  port.events.clear();
  swarm::wire_msg::heartbeat leaving;
  leaving.leaving = true;
  caf::anon_send(m, heartbeat_atom::value, std::string{"w1"}, leaving);
  sched.run();
  CHECK(port.has("record w1 dead")); // what the global scheduler places by
  CHECK(alive("w1"));                // its answers still come
  CHECK(view.get()->at("w1").info.leaving);
  // The next tick tells the nodes, which spill work by their own tables.
  port.sent.clear();
  pass(500ms);
  REQUIRE(port.sent_to<wire_msg::node_table>("w2") == 1);
  for (auto& [to, msg] : port.sent)
    if (to == "w2") {
      auto& t = std::get<wire_msg::node_table>(msg);
      REQUIRE(t.changes.size() == 1);
      CHECK(t.changes[0].name == "w1");
      CHECK(t.changes[0].leaving);
      CHECK(t.changes[0].alive);
    }
  CHECK(swarm::actors::least_busy(*view.get(), "head", 2, [](const peer_view&) {
          return true;
        }) == std::vector<std::string>{"w2"});
  heartbeat("w1"); // a heartbeat sent before it stopped changes nothing
  CHECK_FALSE(port.has("record w1 alive"));
  join("w1"); // started again
  CHECK(port.has("record w1 alive"));
}

TEST_CASE_FIXTURE(fixture, "heartbeats keep a node alive on the head") {
  start("head", {"head", "w1"});
  join("w1");
  for (int i = 0; i < 10; ++i) {
    pass(500ms);
    heartbeat("w1");
  }
  CHECK(alive("w1"));
  CHECK_FALSE(port.has("record w1 dead"));
}

TEST_CASE_FIXTURE(fixture, "a node whose bytes keep arriving is not found dead though "
                           "its heartbeats wait behind them") {
  start("head", {"head", "w1"});
  join("w1");
  port.quiet["w1"] = 0ms; // bulk frames arrive; the heartbeats queue behind them
  pass(10s);
  CHECK(alive("w1"));
  port.quiet["w1"] = 2500ms; // now nothing arrives
  pass(500ms);
  CHECK_FALSE(alive("w1"));
}

TEST_CASE_FIXTURE(fixture, "no report makes a node mark itself dead") {
  start("head", {"head", "w1"});
  caf::anon_send(m, down_atom::value, std::string{"head"}, std::string{"forged"});
  sched.run();
  CHECK(alive("head"));
  CHECK(port.events == std::vector<std::string>{});
}

TEST_CASE_FIXTURE(fixture, "a worker heartbeats the head each interval and rejoins when "
                           "the head's connection is gone") {
  start("w1", {"head", "w1"});
  port.open.insert("head");
  port.queued_now = 3;
  wire_msg::node_table joined; // the head's answer to its join
  joined.version = 1;
  joined.nodes = {node("head"), node("w1")};
  caf::anon_send(m, table_atom::value, joined);
  sched.run();
  pass(1500ms);
  CHECK(port.sent_to<wire_msg::heartbeat>("head") == 3);
  CHECK(std::get<wire_msg::heartbeat>(port.sent.back().second).queued == 3);
  CHECK_FALSE(port.has("rejoin"));
  port.open.erase("head");
  pass(500ms);
  CHECK(port.has("rejoin"));
}

TEST_CASE_FIXTURE(fixture, "a worker whose connection to the head closed joins again at "
                           "its next heartbeat, on a new one that other traffic opened") {
  start("w1", {"head", "w1"});
  port.open.insert("head");
  wire_msg::node_table joined;
  joined.version = 1;
  joined.nodes = {node("head"), node("w1")};
  caf::anon_send(m, table_atom::value, joined);
  sched.run();
  pass(500ms);
  CHECK_FALSE(port.has("rejoin"));
  // A head started again: the old connection closes, a request opens the new one.
  caf::anon_send(m, down_atom::value, std::string{"head"}, std::string{"reset"});
  sched.run();
  pass(500ms);
  CHECK(port.has("rejoin"));
}

TEST_CASE_FIXTURE(fixture, "a worker connected to the head whose join goes unanswered "
                           "for three heartbeats joins again") {
  start("w1", {"head", "w1"});
  port.open.insert("head"); // opened by other traffic, or its join lost
  pass(1000ms);
  CHECK_FALSE(port.has("rejoin")); // each heartbeat asks for the table whole
  pass(500ms);
  CHECK(port.has("rejoin"));
  port.events.clear();
  pass(1000ms); // asked again only three heartbeats later
  CHECK_FALSE(port.has("rejoin"));
}

TEST_CASE_FIXTURE(fixture, "a worker takes the head's table: it dials no peer before it "
                           "has something for it and closes connections to dead ones") {
  start("w2", {"head", "w1", "w2", "w3", "w4"});
  port.open = {"head", "w1", "w4"};
  wire_msg::node_table t;
  t.nodes = {node("head"), node("w1"), node("w2"), node("w3"), node("w4")};
  t.nodes[1].alive = false;
  t.nodes[4].alive = false;
  caf::anon_send(m, table_atom::value, t);
  sched.run();
  CHECK_FALSE(port.has("dial w3")); // the transport dials it on the first send
  CHECK_FALSE(port.has("dial head"));
  CHECK(port.has("disconnect w1: the head found node 'w1' dead"));
  CHECK(port.has("disconnect w4: the head found node 'w4' dead"));
  CHECK_FALSE(alive("w1"));
  CHECK(alive("w3"));
}

TEST_CASE_FIXTURE(fixture,
                  "a client fails over work on a node the head finds dead that it "
                  "never connected to, once per death") {
  // A task the head placed on w1 for this client, while the client still dialled it:
  // no connection closes to tell the client that w1 died.
  start("client-a", {"head", "w1", "w2"});
  port.open = {"head", "w2"};
  wire_msg::node_table whole;
  whole.version = 3;
  whole.nodes = {node("head"), node("w1"), node("w2")};
  caf::anon_send(m, table_atom::value, whole);
  sched.run();
  CHECK(port.has("dial w1")); // nobody dials a client: it dials every node
  wire_msg::node_table change;
  change.base = 3;
  change.version = 4;
  change.changes = {wire_msg::node_change{"w1", false, 1500}};
  caf::anon_send(m, table_atom::value, change);
  sched.run();
  CHECK(port.has("lost w1"));
  CHECK_FALSE(port.has("disconnect w1: the head found node 'w1' dead"));
  // Sends the whole table (w1 `alive` or not), then the change that w1 died.
  auto whole_then_death = [&](uint64_t version, bool alive) {
    whole.version = version;
    whole.nodes[1].alive = alive;
    caf::anon_send(m, table_atom::value, whole);
    change.base = version;
    change.version = version + 1;
    caf::anon_send(m, table_atom::value, change);
    sched.run();
  };
  // The same death again, whole or as a change, is not a second loss.
  port.events.clear();
  whole_then_death(5, false);
  CHECK_FALSE(port.has("lost w1"));
  // Back, then dead again: a loss again.
  whole_then_death(7, true);
  CHECK(port.has("lost w1"));
}

TEST_CASE_FIXTURE(fixture,
                  "the head fails over work on a silent node it has no connection "
                  "to") {
  start("head", {"head", "w1"});
  join("w1");
  port.open.erase("w1"); // its connection went; it rejoins, but says nothing meanwhile
  port.events.clear();
  pass(2500ms);
  CHECK_FALSE(alive("w1"));
  CHECK(port.has("lost w1"));
}

TEST_CASE_FIXTURE(fixture, "a worker fails over work on a lost peer without judging it") {
  start("w1", {"head", "w1", "w2"});
  caf::anon_send(m, down_atom::value, std::string{"w2"}, std::string{"reset"});
  sched.run();
  CHECK(port.events == std::vector<std::string>{"lost w2"});
}

TEST_CASE_FIXTURE(fixture, "a worker applies a change of the table version it holds, and "
                           "after a change it missed asks for the whole table") {
  start("w2", {"head", "w1", "w2", "w3"});
  port.open = {"head", "w3"};
  auto last_heartbeat = [&] {
    for (auto i = port.sent.rbegin(); i != port.sent.rend(); ++i)
      if (auto* hb = std::get_if<wire_msg::heartbeat>(&i->second)) return *hb;
    FAIL("no heartbeat sent");
    return wire_msg::heartbeat{};
  };
  auto queued_of = [&](const std::string& name) {
    return view.get()->at(name).info.queued;
  };
  pass(500ms);
  CHECK(last_heartbeat().needs_table); // it has no table yet
  wire_msg::node_table whole;
  whole.version = 10;
  whole.nodes = {node("head"), node("w1"), node("w2"), node("w3")};
  caf::anon_send(m, table_atom::value, whole);
  sched.run();
  pass(500ms);
  CHECK_FALSE(last_heartbeat().needs_table);

  wire_msg::node_table change;
  change.base = 10;
  change.version = 11;
  change.changes = {wire_msg::node_change{"w3", false, 2500},
                    wire_msg::node_change{"w1"}};
  change.changes[1].queued = 5;
  change.changes[1].leaving = true;
  caf::anon_send(m, table_atom::value, change);
  sched.run();
  CHECK_FALSE(alive("w3"));
  CHECK(port.has("disconnect w3: the head found node 'w3' dead"));
  CHECK(queued_of("w1") == 5);
  // w1 stops: alive (not cut off), but this node sends it no more work.
  CHECK(alive("w1"));
  CHECK_FALSE(port.has("disconnect w1"));
  CHECK(view.get()->at("w1").info.leaving);

  wire_msg::node_table after_a_gap;
  after_a_gap.base = 12;
  after_a_gap.version = 13;
  after_a_gap.changes = {wire_msg::node_change{"w1"}};
  after_a_gap.changes[0].queued = 9;
  caf::anon_send(m, table_atom::value, after_a_gap);
  sched.run();
  CHECK(queued_of("w1") == 5); // not applied
  pass(500ms);
  CHECK(last_heartbeat().needs_table);
  // A change of the right version is not taken either until the whole table came.
  after_a_gap.base = 11;
  caf::anon_send(m, table_atom::value, after_a_gap);
  sched.run();
  CHECK(queued_of("w1") == 5);
  whole.version = 14;
  whole.nodes[1].queued = 9;
  caf::anon_send(m, table_atom::value, whole);
  sched.run();
  CHECK(queued_of("w1") == 9);
  CHECK(alive("w3")); // the whole table has it alive again
  pass(500ms);
  CHECK_FALSE(last_heartbeat().needs_table);
}

TEST_CASE_FIXTURE(fixture, "a client the head dropped leaves a worker's table with the "
                           "change that removes it") {
  start("w1", {"head", "w1"});
  port.open = {"head", "client-a"};
  wire_msg::node_table whole;
  whole.version = 3;
  whole.nodes = {node("head"), node("w1"), node("client-a")};
  whole.nodes[2].client = true;
  caf::anon_send(m, table_atom::value, whole);
  sched.run();
  REQUIRE(view.get()->count("client-a") == 1);
  wire_msg::node_table change;
  change.base = 3;
  change.version = 4;
  change.removed = {"client-a"};
  caf::anon_send(m, table_atom::value, change);
  sched.run();
  CHECK(view.get()->count("client-a") == 0);
  CHECK(port.has("disconnect client-a: node 'client-a' left the cluster"));
}

TEST_CASE_FIXTURE(fixture, "a watcher hears of each view membership publishes, and only "
                           "while it watches") {
  start("head", {"head", "w1", "w2"});
  auto views = [&] {
    size_t n = 0;
    for (bool more = true; more;)
      self->receive([&](view_atom) { ++n; }, caf::after(0ms) >> [&] { more = false; });
    return n;
  };
  caf::anon_send(m, watch_atom::value, caf::actor{self}, true);
  sched.run();
  join("w1"); // a join is published at once
  CHECK(views() == 1);
  CHECK(alive("w1"));
  caf::anon_send(m, watch_atom::value, caf::actor{self}, false);
  sched.run();
  join("w2");
  CHECK(alive("w2"));
  CHECK(views() == 0);
}

TEST_CASE_FIXTURE(fixture, "the head drops the row of a dead node that joined by address "
                           "once its death went out, and keeps a dead node of the file") {
  start("head", {"head", "w1"});
  join("w1");
  auto j1 = node("j1");
  j1.owner_index = 7;
  port.open.insert("j1");
  caf::anon_send(m, join_atom::value, wire_msg::join{j1});
  sched.run();
  for (auto& name : {"w1", "j1"})
    caf::anon_send(m, down_atom::value, std::string{name}, std::string{"closed"});
  sched.run();
  pass(1000ms); // one tick reports both dead, the next drops j1
  CHECK(port.has("forget j1"));
  CHECK_FALSE(port.has("forget w1"));
  CHECK(view.get()->count("j1") == 0);
  CHECK(view.get()->count("w1") == 1);
}
