#pragma once

// The membership actor's test bed: a port that records what membership asks of its node,
// and a fixture running membership on CAF's test coordinator.

#include <doctest/doctest.h>

#include <caf/all.hpp>
#include <caf/test/dsl.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "actors/node/membership.hpp"

namespace swarm::membership_test {

using namespace std::chrono_literals;
using namespace swarm::actors;
namespace wire_msg = swarm::wire_msg;

// Records, in order, everything membership asks of its node.
struct recording_port final : membership_port {
  std::vector<std::string> events;
  std::set<std::string> open;                             // peers with a connection
  std::map<std::string, std::chrono::milliseconds> quiet; // absent: cannot tell
  uint32_t queued_now = 0;
  std::vector<std::pair<std::string, wire_msg::message>> sent;
  std::vector<std::vector<std::string>> sent_all_calls; // the peers of each send_all
  std::vector<wire_msg::kv_placement> placements;       // applied here, in order

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
  void set_kv_placement(const wire_msg::kv_placement& p) override {
    placements.push_back(p);
  }
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

inline wire_msg::node_info node(const std::string& name) {
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

  // Starts the membership of `me` in a cluster of `nodes` (the first is the head);
  // `kv_hosts` nodes serve the key-value table's `kv_shards` shards.
  void start(const std::string& me, std::vector<std::string> nodes,
             size_t replication = 1, size_t kv_hosts = 1, size_t kv_shards = 1) {
    membership_config mc;
    mc.gcs_hosts = kv_hosts;
    mc.gcs_shards = kv_shards;
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
    caf::anon_send(m, join_atom::value, wire_msg::join{node(name)});
    sched.run();
  }

  // `name` joins holding the key-value placement `held`.
  void join_holding(const std::string& name, const wire_msg::kv_placement& held) {
    port.open.insert(name);
    caf::anon_send(m, join_atom::value, wire_msg::join{node(name), held});
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

} // namespace swarm::membership_test
