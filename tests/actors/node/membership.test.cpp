#include <doctest/doctest.h>

#include <caf/all.hpp>
#include <caf/test/dsl.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "actors/node/membership.hpp"

using namespace std::chrono_literals;
using namespace swarm::actors;
namespace wire_msg = swarm::wire_msg;

namespace {

// Records, in order, everything membership asks of its node.
struct recording_port final : membership_port {
  std::vector<std::string> events;
  std::set<std::string> open;                             // peers with a connection
  std::map<std::string, std::chrono::milliseconds> quiet; // absent: cannot tell
  uint32_t queued_now = 0;
  std::vector<std::pair<std::string, wire_msg::message>> sent;
  std::vector<std::vector<std::string>> sent_all_calls; // the peers of each send_all

  bool send(const std::string& peer, const wire_msg::message& m) override {
    if (open.count(peer) == 0) return false;
    sent.emplace_back(peer, m);
    return true;
  }
  std::vector<std::string> send_all(const std::vector<std::string>& peers,
                                    const wire_msg::message& m) override {
    sent_all_calls.push_back(peers);
    return membership_port::send_all(peers, m);
  }
  bool connected(const std::string& peer) override { return open.count(peer) > 0; }
  std::optional<std::chrono::milliseconds> quiet_for(const std::string& peer) override {
    if (auto i = quiet.find(peer); i != quiet.end()) return i->second;
    return std::nullopt;
  }
  void disconnect(const std::string& peer, const std::string& why) override {
    events.push_back("disconnect " + peer + ": " + why);
  }
  void dial(const std::string& peer) override { events.push_back("dial " + peer); }
  void rejoin() override { events.push_back("rejoin"); }
  void record(const wire_msg::node_info& info) override {
    events.push_back("record " + info.name + (info.alive ? " alive" : " dead"));
  }
  void forget(const std::string& client) override {
    events.push_back("forget " + client);
  }
  void set_chain(std::vector<std::string> members) override {
    std::string s;
    for (auto& m : members)
      s += (s.empty() ? "" : ",") + m;
    events.push_back("chain " + s);
  }
  void lost(const std::string& peer, const std::string&) override {
    events.push_back("lost " + peer);
  }
  uint32_t queued() override { return queued_now; }
  swarm::wire_msg::store_usage store() override { return {}; }
  caf::actor scheduler() override { return {}; }
  void fenced(uint64_t life, const std::string& why) override {
    events.push_back("fenced as life " + std::to_string(life) + ": " + why);
  }

  // How many messages of type T went to `peer`.
  template <class T> size_t sent_to(const std::string& peer) const {
    return static_cast<size_t>(std::count_if(sent.begin(), sent.end(), [&](auto& s) {
      return s.first == peer && std::holds_alternative<T>(s.second);
    }));
  }

  bool has(const std::string& event) const {
    return std::find(events.begin(), events.end(), event) != events.end();
  }
};

// The port and the view outlive the actor system (a base destroyed after it).
struct membership_parts {
  recording_port port;
  membership_view view;
};

wire_msg::node_info node(const std::string& name) {
  wire_msg::node_info n;
  n.name = name;
  n.address = "127.0.0.1";
  n.total = {{"CPU", 2.0}};
  return n;
}

// Steps the actor with the test coordinator: `sched.run()` handles what is queued, and
// time passes only when `pass` says (the fixture's own `run` would fire the ticks
// forever).
struct fixture : membership_parts, test_coordinator_fixture<> {
  membership_actor m;

  ~fixture() override {
    if (m) caf::anon_send_exit(m, caf::exit_reason::user_shutdown);
    sched.run();
  }

  // Starts the membership of `me` in a cluster of `nodes` (the first is the head).
  void start(const std::string& me, std::vector<std::string> nodes,
             size_t replication = 1) {
    membership_config mc;
    mc.self = node(me);
    mc.self.client = me.rfind("client", 0) == 0;
    mc.head = nodes.front();
    mc.nodes = std::move(nodes);
    mc.replication = replication;
    mc.heartbeat_interval = 500ms;
    mc.node_timeout = 2000ms;
    m = spawn_membership(sys, std::move(mc), port, view, false);
    sched.run();
  }

  void join(const std::string& name) {
    port.open.insert(name);
    caf::anon_send(m, join_atom::value, node(name));
    sched.run();
  }

  // A heartbeat of `name`'s life `life`.
  void heartbeat(const std::string& name, uint64_t life = 0) {
    swarm::wire_msg::heartbeat hb;
    hb.incarnation = life;
    caf::anon_send(m, heartbeat_atom::value, name, std::move(hb));
    sched.run();
  }

  // Lets `d` of simulated time pass, each tick handled as it falls due.
  void pass(caf::timespan d) {
    auto step = caf::timespan{100ms};
    for (caf::timespan t{0}; t < d; t += step) {
      advance_time(step);
      sched.run();
    }
  }

  // The `i`th message sent, a node table.
  const wire_msg::node_table& table_sent(size_t i) const {
    return std::get<wire_msg::node_table>(port.sent.at(i).second);
  }

  bool alive(const std::string& name) const {
    auto peers = view.get();
    auto i = peers->find(name);
    return i != peers->end() && i->second.info.alive;
  }
};

} // namespace

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
  caf::anon_send(m, join_atom::value, joiner(7, "10.0.0.1"));
  sched.run();
  caf::anon_send(m, join_atom::value, joiner(9, "10.0.0.2"));
  sched.run();
  auto row = view.get()->at("j1").info;
  CHECK(row.owner_index == 7);
  CHECK(row.address == "10.0.0.1");
  caf::anon_send(m, down_atom::value, std::string{"j1"}, std::string{"closed"});
  sched.run();
  CHECK_FALSE(alive("j1"));
  caf::anon_send(m, join_atom::value, joiner(9, "10.0.0.2"));
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
  pass(500ms); // their rows go out
  auto version = table_sent(port.sent.size() - 1).version;
  wire_msg::heartbeat busy;
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
  pass(1500ms);
  CHECK(port.sent_to<wire_msg::heartbeat>("head") == 3);
  CHECK(std::get<wire_msg::heartbeat>(port.sent.back().second).queued == 3);
  CHECK_FALSE(port.has("rejoin"));
  port.open.erase("head");
  pass(500ms);
  CHECK(port.has("rejoin"));
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
  caf::anon_send(m, join_atom::value, j1);
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
