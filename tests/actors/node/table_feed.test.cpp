// The node table as the head sends it: the nodes' loads only to the nodes that place
// work by them, changes of state to every node.

#include "tests/actors/node/membership_fixture.hpp"

using namespace std::chrono_literals;
using namespace swarm::actors;
using namespace swarm::membership_test;
namespace wire_msg = swarm::wire_msg;

namespace {

struct feed_fixture : fixture {
  // A heartbeat of `name`, with `queued` tasks, asking for the loads or not.
  void beat(const std::string& name, uint32_t queued, bool reads) {
    wire_msg::heartbeat hb;
    hb.queued = queued;
    hb.wants_load = reads;
    caf::anon_send(m, heartbeat_atom::value, name, hb);
    sched.run();
  }

  // The tables sent to `to` since the last `clear`.
  std::vector<wire_msg::node_table> tables_to(const std::string& to) const {
    std::vector<wire_msg::node_table> out;
    for (auto& [peer, msg] : port.sent)
      if (auto* t = std::get_if<wire_msg::node_table>(&msg); t && peer == to)
        out.push_back(*t);
    return out;
  }

  static const wire_msg::node_change* change_of(const wire_msg::node_table& t,
                                                const std::string& name) {
    for (auto& c : t.changes)
      if (c.name == name) return &c;
    return nullptr;
  }
};

} // namespace

TEST_CASE_FIXTURE(feed_fixture,
                  "a node that places no work by the nodes' loads gets only changes of "
                  "state, each of the version it holds, and the table whole once it "
                  "starts to") {
  start("head", {"head", "w1", "w2", "w3"});
  join("w1");
  join("w2");
  pass(500ms);
  port.sent.clear();
  // w2 reads the loads, w1 does not; w1 is busy.
  beat("w2", 0, true);
  beat("w1", 4, false);
  pass(500ms);
  CHECK(tables_to("w1").empty());
  auto to_w2 = tables_to("w2");
  REQUIRE(to_w2.size() == 1);
  CHECK(to_w2[0].base == 0); // whole: the loads it holds are as old as its join
  auto held_by_w1 = to_w2[0].version - 1;
  port.sent.clear();

  // A change of load goes to the reader alone.
  beat("w1", 6, false);
  pass(500ms);
  CHECK(tables_to("w1").empty());
  to_w2 = tables_to("w2");
  REQUIRE(to_w2.size() == 1);
  REQUIRE(change_of(to_w2[0], "w1"));
  CHECK(change_of(to_w2[0], "w1")->queued == 6);
  port.sent.clear();

  // A node joining and one dying are changes of state: w1 gets each as a change of the
  // version it holds, though it missed the versions of load between.
  join("w3");
  pass(500ms);
  auto to_w1 = tables_to("w1");
  REQUIRE(to_w1.size() == 1);
  CHECK(to_w1[0].base == held_by_w1);
  REQUIRE(to_w1[0].nodes.size() == 1);
  CHECK(to_w1[0].nodes[0].name == "w3");
  CHECK(to_w1[0].changes.empty());
  auto w1_version = to_w1[0].version;
  port.sent.clear();
  caf::anon_send(m, down_atom::value, std::string{"w3"}, std::string{"closed"});
  sched.run(); // a death goes out at once, not with the next tick
  to_w1 = tables_to("w1");
  REQUIRE(to_w1.size() == 1);
  CHECK(to_w1[0].base == w1_version);
  REQUIRE(to_w1[0].changes.size() == 1);
  CHECK(to_w1[0].changes[0].name == "w3");
  CHECK_FALSE(to_w1[0].changes[0].alive);
  to_w2 = tables_to("w2");
  REQUIRE(to_w2.size() == 1);
  CHECK(change_of(to_w2[0], "w3"));
  port.sent.clear();
  beat("w2", 2, true); // a change of load after it
  pass(500ms);
  CHECK(tables_to("w1").empty());
  to_w2 = tables_to("w2");
  REQUIRE(to_w2.size() == 1);
  CHECK(change_of(to_w2[0], "w2"));
  port.sent.clear();

  // w1 starts placing work by load: the table whole, loads as of now.
  beat("w1", 6, true);
  pass(500ms);
  to_w1 = tables_to("w1");
  REQUIRE(to_w1.size() == 1);
  CHECK(to_w1[0].base == 0);
  port.sent.clear();
  // w2 stops: its copy of the loads ages, and the changes of state still come.
  beat("w2", 2, false);
  beat("w1", 9, true);
  pass(500ms);
  CHECK(tables_to("w2").empty());
  REQUIRE(tables_to("w1").size() == 1);
  port.sent.clear();
  auto again = node("w3"); // a new life: the one found dead is fenced
  again.incarnation = 7;
  caf::anon_send(m, join_atom::value, wire_msg::join{again});
  sched.run();
  pass(500ms);
  to_w2 = tables_to("w2");
  REQUIRE(to_w2.size() == 1);
  CHECK(to_w2[0].base != 0);
  REQUIRE(to_w2[0].nodes.size() == 1);
  CHECK(to_w2[0].nodes[0].name == "w3");
}

TEST_CASE_FIXTURE(feed_fixture, "a node asks for the nodes' loads while it places work "
                                "by them, and for ten heartbeats after") {
  start("w1", {"head", "w1"});
  port.open.insert("head");
  auto last_asks = [&] {
    for (auto i = port.sent.rbegin(); i != port.sent.rend(); ++i)
      if (auto* hb = std::get_if<wire_msg::heartbeat>(&i->second)) return hb->wants_load;
    FAIL("no heartbeat sent");
    return false;
  };
  pass(500ms);
  CHECK_FALSE(last_asks());
  view.get(); // reading the table for anything else is no reason
  pass(500ms);
  CHECK_FALSE(last_asks());
  view.loads();
  pass(500ms);
  CHECK(last_asks());
  pass(4500ms); // 9 heartbeats on
  CHECK(last_asks());
  pass(500ms);
  CHECK_FALSE(last_asks());
}
