#include "actors/node/membership.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <set>

#include "actors/scheduling/local_scheduler.hpp"
#include "actors/common/protocol.hpp"
#include "framework/detail/wire_convert.hpp"

namespace swarm::actors {

namespace {

struct membership_state {
  membership_config cfg;
  membership_port* port = nullptr;
  membership_view* view = nullptr;
  peer_table peers;
  std::vector<std::string> chain;
  std::vector<std::string> gone_clients; // the head: dead clients, sent once in a table

  bool is_head() const { return cfg.self.name == cfg.head; }
  bool client() const { return cfg.self.client; }
  const std::string& me() const { return cfg.self.name; }

  void publish() { view->publish(peers); }

  std::vector<std::string> alive_peers() const {
    std::vector<std::string> out;
    for (auto& [name, p] : peers)
      if (name != me() && p.info.alive) out.push_back(name);
    return out;
  }

  // Whether `p` sent neither a heartbeat nor any other bytes for `node_timeout`. A
  // heartbeat may wait behind bulk frames on either side, or behind this node's own
  // reading: any bytes from the peer, read or waiting to be, show it is alive.
  bool silent(const std::string& name, const peer_view& p,
              caf::actor_clock::time_point now) const {
    if (now - p.last_seen <= cfg.node_timeout) return false;
    auto quiet = port->quiet_for(name);
    return !quiet || *quiet > cfg.node_timeout;
  }

  // The head: the chain of every control-store shard is the head and the first
  // `replication - 1` live nodes in the file's order.
  void update_chain() {
    if (!is_head() || cfg.replication <= 1) return;
    std::vector<std::string> members{me()};
    for (auto& n : cfg.nodes) {
      if (members.size() >= cfg.replication) break;
      auto p = peers.find(n);
      if (n != me() && p != peers.end() && p->second.info.alive) members.push_back(n);
    }
    if (members == chain) return;
    std::string names;
    for (auto& m : members)
      names += (names.empty() ? "" : " -> ") + m;
    cfg.log.info("control-store chain: " + names +
                 (members.size() < cfg.replication
                      ? " (" + std::to_string(cfg.replication) + " wanted)"
                      : ""));
    chain = members;
    port->set_chain(std::move(members));
  }

  void broadcast_table(caf::actor_clock::time_point now) {
    auto table = to_node_table(peers, now);
    for (auto& n : alive_peers())
      port->send(n, table);
  }

  // Why `joining` cannot be one cluster with the nodes known: a function or actor type
  // it registered under another signature than a node that has it; empty if none.
  std::string conflict_with(const wire_msg::node_info& joining) const {
    auto check = [&](const std::vector<wire_msg::capability>& mine,
                     const std::vector<wire_msg::capability>& theirs,
                     const std::string& other, const char* what) -> std::string {
      for (auto& c : mine)
        for (auto& o : theirs)
          if (c.name == o.name && c.signature != o.signature)
            return std::string{what} + " '" + c.name + "' is " + c.signature +
                   " on node '" + joining.name + "' but " + o.signature + " on node '" +
                   other + "'";
      return {};
    };
    for (auto& [name, p] : peers) {
      if (name == joining.name) continue;
      if (auto why = check(joining.functions, p.info.functions, name, "function");
          !why.empty())
        return why;
      if (auto why = check(joining.actor_types, p.info.actor_types, name, "actor type");
          !why.empty())
        return why;
    }
    return {};
  }

  void on_join(wire_msg::node_info info, caf::actor_clock::time_point now) {
    if (!is_head() || info.name == me()) return;
    if (auto why = conflict_with(info); !why.empty()) {
      why = "node '" + info.name + "' cannot join: " + why;
      cfg.log.warn(why);
      port->send(info.name, wire_msg::stop_request{info.name, why});
      return;
    }
    auto& p = peers[info.name];
    p.info = std::move(info);
    p.info.alive = true;
    p.info.head = false;
    p.last_seen = now;
    port->record(p.info);
    update_chain();
    publish();
    broadcast_table(now);
  }

  void on_heartbeat(const std::string& peer, const wire_msg::heartbeat& hb,
                    caf::actor_clock::time_point now) {
    auto i = peers.find(peer);
    if (!is_head() || i == peers.end()) return; // not joined: ignored until it joins
    // Reports arrive in the order the transport saw them: a heartbeat after a verdict
    // came on a connection that took over, so the node is back.
    i->second.info.alive = true;
    i->second.last_seen = now;
    i->second.info.queued = hb.queued;
    i->second.info.running = hb.running;
    i->second.info.by_priority = hb.by_priority;
    i->second.info.store = hb.store;
    if (!hb.available.empty()) i->second.info.available = hb.available;
    port->record(i->second.info);
    publish();
  }

  void on_table(const wire_msg::node_table& t, caf::actor_clock::time_point now) {
    if (is_head()) return;
    std::vector<std::string> to_dial, dead;
    std::set<std::string> listed;
    for (auto& n : t.nodes) {
      listed.insert(n.name);
      if (n.name == me()) continue;
      auto& p = peers[n.name];
      p.info = n;
      p.last_seen = now - std::chrono::milliseconds(n.last_seen_ms);
      // Nobody dials a client; a client dials every node.
      if (n.alive && !n.client && (client() || n.name > me())) to_dial.push_back(n.name);
      if (!n.alive) dead.push_back(n.name);
    }
    // Clients that left, dropped by the head after it reported them dead.
    for (auto i = peers.begin(); i != peers.end();) {
      if (i->second.info.client && !listed.count(i->first)) {
        if (port->connected(i->first))
          port->disconnect(i->first, "client '" + i->first + "' left the cluster");
        i = peers.erase(i);
      } else {
        ++i;
      }
    }
    publish();
    // The head's verdict stands for everyone: work and pulls in flight there fail over.
    for (auto& n : dead)
      if (port->connected(n)) port->disconnect(n, "the head found node '" + n + "' dead");
    // Peers dial each other once (the smaller name dials), so calls between workers do
    // not wait for a connection.
    for (auto& n : to_dial)
      if (!port->connected(n)) port->dial(n);
  }

  void on_down(const std::string& peer, const std::string& why) {
    // The transport never connects a peer under this node's own name; no report may make
    // the node mark itself dead.
    if (peer == me()) return;
    auto i = peers.find(peer);
    bool verdict = is_head() && i != peers.end() && i->second.info.alive;
    if (verdict) {
      i->second.info.alive = false;
      port->record(i->second.info);
      update_chain();
    }
    port->lost(peer, why);
    // Published last: a reader that sees the node dead sees its work failed over.
    if (verdict) publish();
  }

  void on_tick(caf::actor_clock::time_point now) {
    auto& self = peers[me()];
    self.last_seen = now;
    self.info.queued = port->queued();
    self.info.store = port->store();
    if (!is_head()) {
      publish();
      if (!port->connected(cfg.head)) port->rejoin();
      wire_msg::heartbeat hb;
      hb.sent_ns = static_cast<uint64_t>(now.time_since_epoch().count());
      hb.available = self.info.available;
      hb.queued = self.info.queued;
      hb.running = self.info.running;
      hb.by_priority = self.info.by_priority;
      hb.store = self.info.store;
      hb.load = static_cast<double>(hb.queued);
      port->send(cfg.head, hb);
      return;
    }
    port->record(self.info);
    // Clients reported dead in an earlier table leave it: their rows would pile up.
    for (auto& name : gone_clients) {
      peers.erase(name);
      port->forget(name);
    }
    gone_clients.clear();
    std::vector<std::string> silent_peers;
    for (auto& [name, p] : peers) {
      if (name == me() || !p.info.alive || !silent(name, p, now)) continue;
      p.info.alive = false;
      port->record(p.info);
      silent_peers.push_back(name);
    }
    publish();
    // A frozen node (stopped, or its network cut) keeps its connection open: closing it
    // fails over what was in flight there, as a crash would.
    for (auto& n : silent_peers)
      port->disconnect(n, "no heartbeat for " + std::to_string(cfg.node_timeout.count()) +
                              " ms");
    update_chain(); // also brings back a node that joined again
    broadcast_table(now);
    for (auto& [name, p] : peers)
      if (p.info.client && !p.info.alive) gone_clients.push_back(name);
  }
};

using membership_self = membership_actor::stateful_pointer<membership_state>;

// Asks the local scheduler what is not held by running work, for the next heartbeat (and,
// on the head, the table) to carry.
void ask_available(membership_self self) {
  auto scheduler = self->state.port->scheduler();
  if (!scheduler) return;
  self->request(scheduler, self->state.cfg.heartbeat_interval, stats_atom::value)
      .then(
          [=](const scheduler_load& load) {
            auto& info = self->state.peers[self->state.me()].info;
            info.available = detail::to_list(load.available);
            info.running = static_cast<uint32_t>(load.running);
            info.by_priority = load.by_priority;
          },
          [](caf::error&) {});
}

membership_actor::behavior_type membership(membership_self self, membership_config cfg,
                                           membership_port* port, membership_view* view) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.port = port;
  st.view = view;
  auto& me = st.peers[st.me()];
  me.info = st.cfg.self;
  me.info.alive = true;
  me.info.head = st.is_head();
  me.last_seen = self->clock().now();
  st.publish();
  self->delayed_send(self, st.cfg.heartbeat_interval, tick_atom::value);
  return {
      [=](join_atom, wire_msg::node_info& info) {
        self->state.on_join(std::move(info), self->clock().now());
      },
      [=](heartbeat_atom, const std::string& peer, const wire_msg::heartbeat& hb) {
        self->state.on_heartbeat(peer, hb, self->clock().now());
      },
      [=](table_atom, const wire_msg::node_table& t) {
        self->state.on_table(t, self->clock().now());
      },
      [=](down_atom, const std::string& peer, const std::string& why) {
        self->state.on_down(peer, why);
      },
      [=](tick_atom) {
        ask_available(self);
        self->state.on_tick(self->clock().now());
        self->delayed_send(self, self->state.cfg.heartbeat_interval, tick_atom::value);
      },
  };
}

} // namespace

std::vector<std::string> least_busy(const peer_table& peers, const std::string& self,
                                    size_t n,
                                    const std::function<bool(const peer_view&)>& able) {
  std::vector<std::pair<uint32_t, std::string>> free;
  for (auto& [name, p] : peers)
    if (p.info.alive && name != self && !p.info.client && able(p))
      free.emplace_back(p.info.queued + p.info.running, name);
  std::sort(free.begin(), free.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < free.size() && i < n; ++i)
    out.push_back(free[i].second);
  return out;
}

wire_msg::node_table to_node_table(const peer_table& peers,
                                   caf::actor_clock::time_point now) {
  wire_msg::node_table t;
  for (auto& [name, p] : peers) {
    auto info = p.info;
    info.last_seen_ms = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(now - p.last_seen).count());
    t.nodes.push_back(std::move(info));
  }
  return t;
}

membership_view::membership_view() : table_(std::make_shared<const peer_table>()) {}

std::shared_ptr<const peer_table> membership_view::get() const {
  return std::atomic_load(&table_);
}

void membership_view::publish(peer_table table) {
  std::atomic_store(&table_, std::shared_ptr<const peer_table>{
                                 std::make_shared<const peer_table>(std::move(table))});
}

membership_port::~membership_port() = default;

membership_actor spawn_membership(caf::actor_system& sys, membership_config cfg,
                                  membership_port& port, membership_view& view,
                                  bool detached) {
  // The node's own row is there before the actor first runs: work submitted as soon as
  // the node is up finds it.
  peer_table initial;
  auto& me = initial[cfg.self.name];
  me.info = cfg.self;
  me.info.alive = true;
  me.info.head = cfg.self.name == cfg.head;
  view.publish(std::move(initial));
  if (detached) return sys.spawn<caf::detached>(membership, std::move(cfg), &port, &view);
  return sys.spawn(membership, std::move(cfg), &port, &view);
}

} // namespace swarm::actors
