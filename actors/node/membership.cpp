#include "actors/node/membership.hpp"
#include "actors/node/kv_placer.hpp"
#include "actors/node/signature_index.hpp"
#include "actors/node/table_feed.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <set>

#include "actors/common/protocol.hpp"
#include "actors/scheduling/local_scheduler.hpp"
#include "framework/detail/wire_convert.hpp"

namespace swarm::actors {

namespace {

// A client, or a node that joined by the head's address (the head gave it an owner
// index): no row of the file.
bool outside_file(const wire_msg::node_info& info) {
  return info.client || info.owner_index != 0;
}

struct membership_state {
  membership_config cfg;
  membership_port* port = nullptr;
  membership_view* view = nullptr;
  peer_table peers;
  std::vector<std::string> chain;
  // The head: dead nodes outside the file (clients, nodes that joined by address), sent
  // once in a table as dead, then dropped: a name that joins again is a new node.
  std::vector<std::string> gone_nodes;
  signature_index signatures;            // the head: what every node registered
  kv_placer placer{kv_placer::config{}}; // the head: the key-value shards' placement
  // The head: whether it placed the key-value table in this life; until when it gathers
  // the nodes of its file (before it places the table, and while it holds the joins of
  // nodes that followed another head); whether it has, and the joins it holds meanwhile.
  bool kv_placed = false;
  caf::actor_clock::time_point gather_until;
  // The head: until when a key-value shard whose members with a copy have not joined
  // this head yet waits for them (twice the node timeout since it started).
  caf::actor_clock::time_point holders_until;
  bool gathered = false;
  std::vector<wire_msg::join> held;
  bool taking_held = false;
  const caf::actor_clock* clock = nullptr;

  // The head: the node table as it goes out, and its own row as sent and as recorded
  // last.
  table_feed feed{1};
  std::optional<wire_msg::node_change> self_sent;
  std::optional<wire_msg::node_change> self_recorded;

  // Another node: the lives of nodes outside the file that the head dropped from its
  // table after it found them dead, the latest (a join names them, see `join_of`).
  std::vector<wire_msg::node_life> dropped;
  // Another node: the version of the head's table it holds, and whether it missed a
  // change (its next heartbeat asks for the table whole).
  uint64_t table_version = 0;
  bool needs_table = true;
  // Another node: ticks it asked for the table whole in vain while connected to the head,
  // and whether it waits for its first table as a new life (its port joins for it).
  uint32_t ticks_unanswered = 0;
  bool new_life = false;
  // Another node: its connection to the head closed since it last joined; a new one,
  // opened by other traffic (a request, a chain's message) before its tick, has no join.
  bool head_closed = false;
  // Another node: ticks since this node last placed work by the others' loads (its
  // heartbeats ask for their changes while `reads_load`).
  uint64_t ticks_since_load_read = load_read_ticks_never;
  static constexpr uint64_t load_read_ticks_never = ~uint64_t{0} / 2;
  // Something in `peers` changed since the view was last published.
  bool view_dirty = false;
  // The head: nodes that heartbeat without having joined, since when.
  std::map<std::string, caf::actor_clock::time_point> unjoined;
  // The head: the lives of nodes it found dead (clients excepted), and why. Their work
  // went to others and their actors restarted elsewhere, so such a life never comes
  // back: its heartbeats and joins are answered with `node_fenced`, and the node joins
  // again as a new life once it has stopped what it ran for others.
  struct fence_row {
    uint64_t life = 0;
    std::string why;
    bool logged = false;
  };
  std::map<std::string, fence_row> fenced;
  // Those told of each view published (threads waiting for nodes).
  std::vector<caf::actor> watchers;
  // The head: the rows of nodes that joined go out shortly (`joined_atom`), together.
  std::function<void()> schedule_join_flush;
  bool join_flush_pending = false;

  bool is_head() const { return cfg.self.name == cfg.head; }
  bool client() const { return cfg.self.client; }
  const std::string& me() const { return cfg.self.name; }

  // The view is a copy of the whole table: it is published when a reader must see a
  // change at once (a join, a death, a node back), else at most once a tick, when
  // something in it changed.
  void publish() {
    view->publish(peers);
    view_dirty = false;
    for (auto& w : watchers)
      caf::anon_send(w, view_atom::value);
  }
  void publish_if_changed() {
    if (view_dirty) publish();
  }

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
    if (taking_held) return;
    update_kv_placement();
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

  // The head: places the key-value table's shards again; the nodes get the placement at
  // once, and again while their heartbeats name another version.
  void update_kv_placement() {
    if (!is_head() || !placer.enabled()) return;
    auto alive = [this](const std::string& n) {
      auto p = peers.find(n);
      return p != peers.end() && p->second.info.alive && !p->second.info.leaving;
    };
    // A head places the table first once every node of its file joined, or the node
    // timeout passed since it started (one that has not is lost): started again, it
    // takes the newest placement they hold, so that no shard moves off the nodes with
    // its copies before they are back.
    if (!kv_placed && clock->now() < gather_until)
      for (auto& n : cfg.nodes)
        if (n != me() && !alive(n)) return;
    // A node of the file this head has not heard from, and no earlier head found dead,
    // may still come back with the copies of its shards.
    auto returning = [this](const std::string& n) {
      return clock->now() < holders_until && peers.count(n) == 0 && fenced.count(n) == 0;
    };
    bool moved = placer.update(alive, cfg.wall_clock(), returning);
    // An adopted placement that needs no move is this head's as it stands.
    if (!moved && (kv_placed || placer.placement().version == 0)) return;
    kv_placed = true;
    for (auto& line : placer.changes())
      cfg.log.info("key-value placement: " + line);
    port->set_kv_placement(placer.placement());
    send_tables(clock->now()); // the deaths that moved it go first (see `found_dead`)
    port->send_all(alive_peers(), placer.placement());
  }

  // The head: sends each live peer what changed in the table (see `table_feed`).
  void send_tables(caf::actor_clock::time_point now) {
    if (auto mine = change_of(me(), peers[me()], now);
        !self_sent || !same_state(*self_sent, mine)) {
      feed.changed(me(), !self_sent || state_differs(*self_sent, mine));
      self_sent = std::move(mine);
    }
    feed.send(peers, alive_peers(), now, *port);
  }

  // Another node: whether it placed work by the others' loads lately (for as long as
  // ten heartbeats, and at least 5 s).
  bool reads_load() const {
    auto window = std::max<uint64_t>(
        10, static_cast<uint64_t>(5000 /
                                  std::max<int64_t>(1, cfg.heartbeat_interval.count())));
    return ticks_since_load_read < window;
  }

  void on_join(wire_msg::join j, caf::actor_clock::time_point now) {
    if (!is_head() || j.node.name == me()) return;
    // A node that holds no placement holds no copies. Until this head placed the
    // key-value table, the newest placement its nodes hold is where the shards are (an
    // earlier life of the head made it).
    if (placer.enabled() && j.placement.version == 0) placer.joined_empty(j.node.name);
    if (!kv_placed && placer.enabled() && placer.adopt(j.placement))
      cfg.log.info("key-value placement: version " + std::to_string(j.placement.version) +
                   " taken from node '" + j.node.name + "', made by an earlier head");
    unjoined.erase(j.node.name);
    // A node that followed another head knows the verdicts of that head's; it may be a
    // life that head found dead itself: its join waits until this head heard the others.
    bool earlier_head = j.head_life != 0 && j.head_life != cfg.self.incarnation;
    if (earlier_head) learn_verdicts(j.dead, j.node.name);
    if (!gathered && earlier_head) {
      auto name = j.node.name;
      drop_held(name);
      held.push_back(std::move(j));
      cfg.log.info("node '" + name + "' followed an earlier head: its join waits until " +
                   "this head has heard the nodes of its file");
      return gather(now);
    }
    accept(std::move(j.node), now);
    gather(now);
  }

  // The join of `name` this head holds, if any.
  const wire_msg::join* held_join(const std::string& name) const {
    auto h = std::find_if(held.begin(), held.end(),
                          [&](auto& j) { return j.node.name == name; });
    return h == held.end() ? nullptr : &*h;
  }

  void drop_held(const std::string& name) {
    held.erase(std::remove_if(held.begin(), held.end(),
                              [&](auto& h) { return h.node.name == name; }),
               held.end());
  }

  // The head: ends its gathering once every node of its file joined (held or taken), or
  // its node timeout passed; then takes the joins it held, each checked against every
  // verdict it learned meanwhile.
  void gather(caf::actor_clock::time_point now) {
    if (gathered) return;
    if (now < gather_until)
      for (auto& n : cfg.nodes) {
        if (n == me()) continue;
        auto p = peers.find(n);
        bool joined = (p != peers.end() && p->second.info.alive) || held_join(n);
        if (!joined) return;
      }
    gathered = true;
    auto joins = std::move(held);
    held.clear();
    // The chain is chosen once all are back, as the earlier head had it where they are
    // the same nodes, not around whichever was taken first.
    taking_held = true;
    for (auto& j : joins)
      accept(std::move(j.node), now);
    taking_held = false;
    update_chain();
  }

  // The head: lives another head found dead, as the table of node `from` shows them.
  // Such a life never comes back: it is fenced here too, and found dead at once where
  // this head took it back before it knew.
  void learn_verdicts(const std::vector<wire_msg::node_life>& dead,
                      const std::string& from) {
    for (auto& d : dead) {
      if (d.name == me() || d.incarnation == 0) continue;
      auto why = "an earlier head found it dead (node '" + from + "' saw it so)";
      auto i = peers.find(d.name);
      if (i != peers.end() && i->second.info.incarnation > d.incarnation) continue;
      if (i != peers.end() && i->second.info.incarnation == d.incarnation &&
          i->second.info.alive && !i->second.info.client) {
        cfg.log.warn("node '" + d.name + "' was taken back before this head knew " + why +
                     ": it is fenced");
        found_dead(d.name, i->second, why);
        publish();
        fail_over(d.name, why);
        continue;
      }
      auto& f = fenced[d.name];
      if (f.life < d.incarnation) f = {d.incarnation, why};
    }
  }

  void accept(wire_msg::node_info info, caf::actor_clock::time_point now) {
    if (auto why = signatures.conflict(info); !why.empty()) {
      why = "node '" + info.name + "' cannot join: " + why;
      cfg.log.warn(why);
      port->send(info.name, wire_msg::stop_request{info.name, why});
      return;
    }
    auto name = info.name;
    if (auto f = fenced.find(name); f != fenced.end()) {
      if (f->second.life == info.incarnation) return fence(name, f->second);
      fenced.erase(f); // a new life
    }
    // The head's welcome refuses a name in use; a join under it that raced the welcome
    // (another owner index: another process) takes nothing from the live node.
    if (auto i = peers.find(name); i != peers.end() && i->second.info.alive &&
                                   i->second.info.owner_index != info.owner_index) {
      cfg.log.warn("node '" + name + "' (owner index " +
                   std::to_string(info.owner_index) + ") cannot join: node '" + name +
                   "' (owner index " + std::to_string(i->second.info.owner_index) +
                   ") is alive");
      return;
    }
    auto& p = peers[name];
    p.info = std::move(info);
    p.info.alive = true;
    p.info.head = false;
    p.last_seen = now;
    p.info.leaving = false;
    signatures.add(p.info);
    port->record(p.info);
    feed.joined(name); // it gets the table whole
    update_chain();
    // The head's view and its control store (what `swarm status` shows) have it at once,
    // and so does the node: its table whole.
    publish();
    // A client gets answers from nodes at once: they learn of it at once. The others get
    // a node's row a few ms later, one change for all that joined meanwhile: joins come
    // in bursts when a cluster forms, and each change goes to every node.
    if (p.info.client) {
      send_tables(now);
      return;
    }
    feed.send_whole(name, peers, now, *port);
    if (!join_flush_pending && schedule_join_flush) {
      join_flush_pending = true;
      schedule_join_flush();
    }
  }

  void on_joined(caf::actor_clock::time_point now) {
    join_flush_pending = false;
    send_tables(now);
  }

  // Tells `peer` that the life `f` is fenced (logged once).
  void fence(const std::string& peer, fence_row& f) {
    if (!f.logged)
      cfg.log.warn("node '" + peer + "' is back after the head found it dead (" + f.why +
                   "): it stops what it ran for others and joins again as a new life");
    f.logged = true;
    port->send(peer, wire_msg::node_fenced{f.life, "the head found node '" + peer +
                                                       "' dead: " + f.why});
  }

  // A heartbeat from a node that has not joined (or, after its death, not joined as a
  // new life). Its join may be on its way; but one lost (sent on a connection to a head
  // that had died, while this head's took over as its spare) never comes: past
  // node_timeout the node is cut off, and joins again.
  void not_joined(const std::string& peer, caf::actor_clock::time_point now) {
    auto first = unjoined.emplace(peer, now).first->second;
    if (now - first < cfg.node_timeout) return;
    unjoined.erase(peer);
    port->disconnect(peer, "node '" + peer + "' sent heartbeats for " +
                               std::to_string(cfg.node_timeout.count()) +
                               " ms but has not joined this head: join again");
  }

  void on_heartbeat(const std::string& peer, const wire_msg::heartbeat& hb,
                    caf::actor_clock::time_point now) {
    if (!is_head()) return;
    auto i = peers.find(peer);
    bool dead = i == peers.end() || !i->second.info.alive;
    if (auto f = fenced.find(peer);
        dead && f != fenced.end() && f->second.life == hb.incarnation)
      return fence(peer, f->second);
    // A heartbeat of a dead row's own life brings it back: it came on a connection that
    // took over. Another life's (the process restarted) waits for its join, as one whose
    // join this head holds waits for the gathering's end.
    if (auto h = held_join(peer); h && h->node.incarnation == hb.incarnation) return;
    if (i == peers.end() || (dead && hb.incarnation != i->second.info.incarnation))
      return not_joined(peer, now);
    auto& p = i->second;
    if (kv_placed && hb.kv_placement != placer.placement().version)
      port->send(peer, placer.placement());
    if (hb.leaving && !p.info.leaving) {
      // Alive until it goes (its answers still come), but no work is placed there: by
      // the head, nor by the nodes that spill work (its table's change tells them).
      p.info.leaving = true;
      feed.changed(peer, true);
      cfg.log.info("node '" + peer + "' is stopping: no more work is placed there");
      auto placed = p.info;
      placed.alive = false;
      port->record(placed);
      update_kv_placement(); // its shards go to other members
      publish();
    }
    auto before = change_of(peer, p, now);
    // Reports arrive in the order the transport saw them: a heartbeat after a verdict
    // came on a connection that took over, so the node is back.
    bool back = !p.info.alive;
    p.info.alive = true;
    p.last_seen = now;
    p.info.queued = hb.queued;
    p.info.running = hb.running;
    p.info.by_priority = hb.by_priority;
    p.info.store = hb.store;
    if (!hb.available.empty()) p.info.available = hb.available;
    if (hb.needs_table) feed.resend(peer);
    feed.set_reader(peer, hb.wants_load);
    if (same_state(before, change_of(peer, p, now))) return;
    feed.changed(peer, back);
    view_dirty = true;
    if (p.info.leaving) return; // recorded as no place for work; its table row goes on
    port->record(p.info);
    // The view goes out with the next tick, or now when the node is back: work may go
    // there again.
    if (back) publish();
  }

  // Another node: the head found this life of it dead. What it hosted for others runs
  // elsewhere now: the node stops it, then joins again as a new life.
  void on_fenced(const wire_msg::node_fenced& m) {
    auto& self = peers[me()].info;
    if (is_head() || m.incarnation != self.incarnation) return; // an earlier life's
    auto life = std::max(cfg.wall_clock(), self.incarnation + 1);
    cfg.log.warn(m.reason + ": node '" + me() +
                 "' stops the actors it hosted for other "
                 "nodes and joins again as a new life");
    self.incarnation = life;
    cfg.self.incarnation = life;
    needs_table = true;
    new_life = true;
    view_dirty = true;
    port->fenced(life, m.reason);
  }

  // Another node: takes the head's table, whole or a change of the version it holds. A
  // change of another version means it missed one: it ignores it and asks for the table
  // whole in its next heartbeat.
  void on_table(const wire_msg::node_table& t, caf::actor_clock::time_point now) {
    if (is_head()) return;
    bool whole_table = t.base == 0;
    if (!whole_table && (needs_table || t.base != table_version)) {
      needs_table = true;
      return;
    }
    std::vector<std::string> dead;
    std::set<std::string> listed;
    auto rows_before = peers.size();
    for (auto& n : t.nodes) {
      listed.insert(n.name);
      if (n.name == me()) continue;
      auto known = peers.find(n.name);
      bool known_dead = known != peers.end() && !known->second.info.alive;
      auto& p = peers[n.name];
      p.info = n;
      p.last_seen = now - std::chrono::milliseconds(n.last_seen_ms);
      if (!n.alive && !known_dead) dead.push_back(n.name);
    }
    for (auto& c : t.changes) {
      if (c.name == me()) continue;
      auto i = peers.find(c.name);
      if (i == peers.end()) { // a change of a row it never had: it missed one
        needs_table = true;
        continue;
      }
      auto& p = i->second;
      bool known_dead = !p.info.alive;
      p.info.alive = c.alive;
      p.last_seen = now - std::chrono::milliseconds(c.last_seen_ms);
      p.info.available = c.available;
      p.info.queued = c.queued;
      p.info.running = c.running;
      p.info.by_priority = c.by_priority;
      p.info.store = c.store;
      p.info.leaving = c.leaving;
      if (!c.alive && !known_dead) dead.push_back(c.name);
    }
    // Nodes outside the file that left, dropped by the head after it reported them
    // dead: those a whole table no longer lists, or a change removes.
    auto gone = [&](const std::string& name, const peer_view& p) {
      return name != me() && (whole_table ? outside_file(p.info) && !listed.count(name)
                                          : std::find(t.removed.begin(), t.removed.end(),
                                                      name) != t.removed.end());
    };
    auto dropped_before = dropped.size();
    for (auto i = peers.begin(); i != peers.end();) {
      if (gone(i->first, i->second)) {
        if (port->connected(i->first))
          port->disconnect(i->first, "node '" + i->first + "' left the cluster");
        // The head removes a row only once it found that node dead (a whole table, as of
        // a head started again, may lack a node that has not joined it yet).
        if (!whole_table && !i->second.info.client)
          dropped.push_back({i->first, i->second.info.incarnation});
        i = peers.erase(i);
      } else {
        ++i;
      }
    }
    if (dropped.size() != dropped_before) {
      if (dropped.size() > membership_view::dropped_kept)
        dropped.erase(dropped.begin(),
                      dropped.end() -
                          static_cast<ptrdiff_t>(membership_view::dropped_kept));
      view->publish_dropped(dropped);
    }
    if (whole_table) { // joined, on the connection open now
      needs_table = false;
      ticks_unanswered = 0;
      new_life = false;
      head_closed = false;
    }
    if (!needs_table) table_version = t.version;
    // A table whole, a node joining or leaving, a death is seen at once; changes of load
    // with the next tick.
    if (whole_table || !dead.empty() || peers.size() != rows_before)
      publish();
    else
      view_dirty = true;
    // The head's verdict stands for everyone.
    for (auto& n : dead)
      fail_over(n, "the head found node '" + n + "' dead");
    dial_peers();
  }

  // `n` is dead: work and pulls in flight there fail over, when its connection closes,
  // or at once where there is none (never made, or still in its handshake: a task the
  // head placed there is lost all the same).
  void fail_over(const std::string& n, const std::string& why) {
    if (port->connected(n))
      port->disconnect(n, why);
    else
      port->lost(n, why);
  }

  // Nodes of the cluster dial each other on demand: the transport dials a peer the
  // first time something goes to it. Nobody dials a client, so a client dials every
  // node, where a result for it may be made; tried again each tick while a live node is
  // not connected.
  void dial_peers() {
    if (!client()) return;
    for (auto& [name, p] : peers)
      if (name != me() && p.info.alive && !p.info.client && !port->connected(name))
        port->dial(name);
  }

  // The head's verdict: `name` is dead, `why`. What it ran, queued and stored went with
  // it: its row keeps only what it is (its resources, what it registered), and that
  // life of it is fenced.
  void mark_dead(const std::string& name, peer_view& p, const std::string& why) {
    p.info.alive = false;
    if (!p.info.client) fenced[name] = {p.info.incarnation, why};
    p.info.queued = 0;
    p.info.running = 0;
    p.info.by_priority = {};
    p.info.store = {};
    feed.changed(name, true);
    view_dirty = true;
    port->record(p.info);
  }

  // The head's verdict on one node, out of a tick: the nodes hear it at once, before
  // what follows from it (the chains, the key-value placement), so that a head that
  // dies right after leaves none acting on a verdict its successor cannot learn.
  void found_dead(const std::string& name, peer_view& p, const std::string& why) {
    mark_dead(name, p, why);
    send_tables(clock->now());
    update_chain();
  }

  // The head: `peer` stops, and says what it does with what it held.
  void on_stopped(const std::string& peer, const std::string& report) {
    auto i = peers.find(peer);
    if (!is_head() || i == peers.end()) return;
    cfg.log.info("node '" + peer + "' stops: " + report);
    i->second.info.stop_report = report;
    auto row = i->second.info;
    if (row.leaving) row.alive = false; // no place for work, as `on_heartbeat` records it
    port->record(row);
  }

  void on_down(const std::string& peer, const std::string& why) {
    // The transport never connects a peer under this node's own name; no report may make
    // the node mark itself dead.
    if (peer == me()) return;
    if (!is_head() && peer == cfg.head) head_closed = true;
    unjoined.erase(peer);
    drop_held(peer);
    auto i = peers.find(peer);
    bool verdict = is_head() && i != peers.end() && i->second.info.alive;
    if (verdict) found_dead(peer, i->second, why);
    port->lost(peer, why);
    // Published last: a reader that sees the node dead sees its work failed over.
    if (verdict) publish();
  }

  void on_tick(caf::actor_clock::time_point now) {
    auto& self = peers[me()];
    self.last_seen = now;
    auto queued = port->queued();
    auto store = port->store();
    if (queued != self.info.queued || !(store == self.info.store)) view_dirty = true;
    self.info.queued = queued;
    self.info.store = std::move(store);
    if (!is_head()) {
      if (view->take_load_read())
        ticks_since_load_read = 0;
      else if (ticks_since_load_read < load_read_ticks_never)
        ++ticks_since_load_read;
      publish_if_changed();
      dial_peers();
      if (!port->connected(cfg.head) || (head_closed && !new_life)) {
        needs_table = true; // what the head sent meanwhile is lost
        ticks_unanswered = 0;
        head_closed = false;
        port->rejoin(); // on the connection open, or a new one
      } else if (needs_table && !new_life && ++ticks_unanswered >= 3) {
        // A joined node gets the table whole a tick after it asks: this one's join was
        // lost, or its connection to a head started again was opened by other traffic
        // (a reply, a chain's message), with no join on it. It joins on it.
        ticks_unanswered = 0;
        port->rejoin();
      }
      wire_msg::heartbeat hb;
      hb.sent_ns = static_cast<uint64_t>(now.time_since_epoch().count());
      hb.available = self.info.available;
      hb.queued = self.info.queued;
      hb.running = self.info.running;
      hb.by_priority = self.info.by_priority;
      hb.store = self.info.store;
      hb.load = static_cast<double>(hb.queued);
      hb.needs_table = needs_table;
      hb.wants_load = reads_load();
      hb.incarnation = self.info.incarnation;
      hb.kv_placement = port->kv_placement_version();
      port->send(cfg.head, hb);
      return;
    }
    gather(now);
    // Shards that waited for their members in vain start empty elsewhere.
    if (placer.holding() && now >= holders_until) update_kv_placement();
    if (auto mine = change_of(me(), self, now);
        !self_recorded || !same_state(*self_recorded, mine)) {
      port->record(self.info);
      self_recorded = std::move(mine);
    }
    // Nodes outside the file reported dead in an earlier table leave it: their rows
    // would pile up (an autoscaler's nodes each have a name of their own).
    for (auto& name : gone_nodes) {
      // One that joined again since (a new life) stays.
      if (auto p = peers.find(name); p == peers.end() || p->second.info.alive) continue;
      peers.erase(name);
      signatures.remove(name);
      port->forget(name);
      feed.removed(name);
    }
    if (!gone_nodes.empty()) view_dirty = true;
    gone_nodes.clear();
    std::vector<std::string> silent_peers;
    auto silence = "no heartbeat for " + std::to_string(cfg.node_timeout.count()) + " ms";
    for (auto& [name, p] : peers) {
      if (name == me() || !p.info.alive || !silent(name, p, now)) continue;
      mark_dead(name, p, silence);
      silent_peers.push_back(name);
    }
    publish_if_changed();
    // A frozen node (stopped, or its network cut) keeps its connection open: closing it
    // fails over what was in flight there, as a crash would.
    for (auto& n : silent_peers)
      fail_over(n, silence);
    update_chain(); // also brings back a node that joined again
    send_tables(now);
    for (auto& [name, p] : peers)
      if (outside_file(p.info) && !p.info.alive) gone_nodes.push_back(name);
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
            auto available = detail::to_list(load.available);
            auto running = static_cast<uint32_t>(load.running);
            if (available != info.available || running != info.running ||
                load.by_priority != info.by_priority)
              self->state.view_dirty = true;
            info.available = std::move(available);
            info.running = running;
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
  // Versions start from the wall clock (in microseconds): a restarted head's never
  // continue the old head's.
  st.feed = table_feed{st.cfg.wall_clock() * 1000};
  auto& me = st.peers[st.me()];
  me.info = st.cfg.self;
  me.info.alive = true;
  me.info.head = st.is_head();
  me.last_seen = self->clock().now();
  if (st.is_head()) st.signatures.add(me.info);
  st.placer = kv_placer{{st.cfg.nodes, st.cfg.head, st.cfg.gcs_hosts, st.cfg.replication,
                         st.cfg.gcs_shards}};
  st.clock = &self->clock();
  st.gather_until = self->clock().now() + st.cfg.node_timeout;
  st.holders_until = st.gather_until + st.cfg.node_timeout;
  // Joins within a twentieth of a heartbeat (at most 20 ms) share one change.
  auto join_batch = std::min<caf::timespan>(std::chrono::milliseconds(20),
                                            st.cfg.heartbeat_interval / 20);
  st.schedule_join_flush = [self, join_batch] {
    self->delayed_send(self, join_batch, joined_atom::value);
  };
  st.publish();
  self->delayed_send(self, st.cfg.heartbeat_interval, tick_atom::value);
  return {
      [=](join_atom, wire_msg::join& j) {
        self->state.on_join(std::move(j), self->clock().now());
      },
      [=](heartbeat_atom, const std::string& peer, const wire_msg::heartbeat& hb) {
        self->state.on_heartbeat(peer, hb, self->clock().now());
      },
      [=](table_atom, const wire_msg::node_table& t) {
        self->state.on_table(t, self->clock().now());
      },
      [=](fenced_atom, const wire_msg::node_fenced& m) { self->state.on_fenced(m); },
      [=](down_atom, const std::string& peer, const std::string& why) {
        self->state.on_down(peer, why);
      },
      [=](stopped_atom, const std::string& peer, const std::string& report) {
        self->state.on_stopped(peer, report);
      },
      [=](joined_atom) { self->state.on_joined(self->clock().now()); },
      [=](watch_atom, const caf::actor& who, bool on) {
        auto& w = self->state.watchers;
        w.erase(std::remove(w.begin(), w.end(), who), w.end());
        if (on) w.push_back(who);
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
    if (p.info.alive && !p.info.leaving && name != self && !p.info.client && able(p))
      free.emplace_back(p.info.queued + p.info.running, name);
  std::sort(free.begin(), free.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < free.size() && i < n; ++i)
    out.push_back(free[i].second);
  return out;
}

wire_msg::node_info without_signatures(wire_msg::node_info info) {
  for (auto& c : info.functions)
    c.signature.clear();
  for (auto& c : info.actor_types)
    c.signature.clear();
  return info;
}

wire_msg::join join_of(wire_msg::node_info self, wire_msg::kv_placement placement,
                       const membership_view& view, const std::string& head) {
  wire_msg::join j;
  j.dead = *view.dropped();
  for (auto& [name, p] : *view.get()) {
    if (name == self.name) continue;
    if (name == head)
      j.head_life = p.info.incarnation;
    else if (!p.info.alive && !p.info.client)
      j.dead.push_back({name, p.info.incarnation});
  }
  j.node = std::move(self);
  j.placement = std::move(placement);
  return j;
}

wire_msg::node_table to_node_table(const peer_table& peers,
                                   caf::actor_clock::time_point now) {
  wire_msg::node_table t;
  for (auto& [name, p] : peers) {
    auto info = without_signatures(p.info);
    info.last_seen_ms = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(now - p.last_seen).count());
    t.nodes.push_back(std::move(info));
  }
  return t;
}

membership_view::membership_view()
    : table_(std::make_shared<const peer_table>()),
      dropped_(std::make_shared<const std::vector<wire_msg::node_life>>()) {}

std::shared_ptr<const std::vector<wire_msg::node_life>> membership_view::dropped() const {
  return std::atomic_load(&dropped_);
}

void membership_view::publish_dropped(std::vector<wire_msg::node_life> lives) {
  std::atomic_store(
      &dropped_,
      std::shared_ptr<const std::vector<wire_msg::node_life>>{
          std::make_shared<const std::vector<wire_msg::node_life>>(std::move(lives))});
}

std::shared_ptr<const peer_table> membership_view::get() const {
  return std::atomic_load(&table_);
}

std::shared_ptr<const peer_table> membership_view::loads() const {
  if (!load_read_.load(std::memory_order_relaxed))
    load_read_.store(true, std::memory_order_relaxed);
  return get();
}

bool membership_view::take_load_read() {
  return load_read_.exchange(false, std::memory_order_relaxed);
}

void membership_view::publish(peer_table table) {
  std::atomic_store(&table_, std::shared_ptr<const peer_table>{
                                 std::make_shared<const peer_table>(std::move(table))});
}

membership_port::~membership_port() = default;

void membership_port::set_kv_placement(const wire_msg::kv_placement&) {}

uint64_t membership_port::kv_placement_version() {
  return 0;
}

std::vector<std::string> membership_port::send_all(const std::vector<std::string>& peers,
                                                   const wire_msg::message& m) {
  std::vector<std::string> missed;
  for (auto& p : peers)
    if (!send(p, m)) missed.push_back(p);
  return missed;
}

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
