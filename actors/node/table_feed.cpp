#include "actors/node/table_feed.hpp"

#include <algorithm>

namespace swarm::actors {

wire_msg::node_change change_of(const std::string& name, const peer_view& p,
                                caf::actor_clock::time_point now) {
  wire_msg::node_change c;
  c.name = name;
  c.alive = p.info.alive;
  c.last_seen_ms = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(now - p.last_seen).count());
  c.available = p.info.available;
  c.queued = p.info.queued;
  c.running = p.info.running;
  c.by_priority = p.info.by_priority;
  c.store = p.info.store;
  c.leaving = p.info.leaving;
  return c;
}

bool same_state(const wire_msg::node_change& a, const wire_msg::node_change& b) {
  return a.alive == b.alive && a.available == b.available && a.queued == b.queued &&
         a.running == b.running && a.by_priority == b.by_priority && a.store == b.store &&
         a.leaving == b.leaving;
}

namespace {

// `name`'s row, as a change or whole, appended to `t` when `peers` has it.
void add_row(wire_msg::node_table& t, const std::string& name, bool whole,
             const peer_table& peers, caf::actor_clock::time_point now) {
  auto i = peers.find(name);
  if (i == peers.end()) return;
  auto change = change_of(name, i->second, now);
  if (!whole) return t.changes.push_back(std::move(change));
  auto info = without_signatures(i->second.info);
  info.last_seen_ms = change.last_seen_ms;
  t.nodes.push_back(std::move(info));
}

} // namespace

table_feed::table_feed(uint64_t first) : version_(first), log_floor_(first) {}

void table_feed::joined(const std::string& name) {
  whole_.insert(name);
  sent_version_.erase(name);
}

void table_feed::changed(const std::string& name, bool state) {
  changed_.insert(name);
  if (state) state_changed_.insert(name);
}

void table_feed::removed(const std::string& name) {
  whole_.erase(name);
  changed_.erase(name);
  removed_.push_back(name);
  state_changed_.erase(name);
  sent_version_.erase(name);
  readers_.erase(name);
}

void table_feed::resend(const std::string& name) {
  sent_version_.erase(name);
}

void table_feed::set_reader(const std::string& name, bool reads) {
  if (reads == reader(name)) return;
  if (!reads) {
    readers_.erase(name);
    return;
  }
  readers_.insert(name);
  resend(name); // the loads it holds are as old as its last read
}

void table_feed::send(const peer_table& peers, const std::vector<std::string>& to,
                      caf::actor_clock::time_point now, membership_port& port) {
  std::optional<wire_msg::node_table> delta;
  if (!whole_.empty() || !changed_.empty() || !removed_.empty()) {
    delta.emplace();
    delta->base = version_;
    delta->version = ++version_;
    for (auto& name : whole_)
      add_row(*delta, name, true, peers, now);
    for (auto& name : changed_)
      if (!whole_.count(name)) add_row(*delta, name, false, peers, now);
    delta->removed = std::move(removed_);
    // Rows new or gone are changes of state too.
    if (!whole_.empty() || !state_changed_.empty() || !delta->removed.empty())
      log_.push_back(
          {version_, std::move(whole_), std::move(state_changed_), delta->removed});
    whole_.clear();
    changed_.clear();
    removed_.clear();
    state_changed_.clear();
  }
  // Readers that hold the version before get the change; those that read no loads,
  // by the version they hold, what changed in state since; the rest the table whole.
  std::vector<std::string> current, whole_to;
  std::map<uint64_t, std::vector<std::string>> behind_in_state;
  for (auto& n : to) {
    auto s = sent_version_.find(n);
    if (s != sent_version_.end() && s->second == version_) continue; // nothing new
    if (s == sent_version_.end())
      whole_to.push_back(n);
    else if (reader(n))
      (delta && s->second == delta->base ? current : whole_to).push_back(n);
    else if (s->second < log_floor_)
      whole_to.push_back(n);
    else if (!log_.empty() && log_.back().version > s->second)
      behind_in_state[s->second].push_back(n);
    // else: nothing changed in state since the version it holds.
  }
  if (!whole_to.empty()) send_to_all(whole_to, whole_table(peers, now), port);
  if (delta) send_to_all(current, *delta, port);
  for (auto& [base, nodes] : behind_in_state)
    send_to_all(nodes, states_since(base, peers, now), port);
  trim_log();
}

void table_feed::send_whole(const std::string& to, const peer_table& peers,
                            caf::actor_clock::time_point now, membership_port& port) {
  send_to_all({to}, whole_table(peers, now), port);
}

wire_msg::node_table table_feed::whole_table(const peer_table& peers,
                                             caf::actor_clock::time_point now) const {
  auto full = to_node_table(peers, now);
  full.version = version_;
  return full;
}

wire_msg::node_table table_feed::states_since(uint64_t base, const peer_table& peers,
                                              caf::actor_clock::time_point now) const {
  std::set<std::string> whole, changed, removed;
  for (auto& v : log_) {
    if (v.version <= base) continue;
    for (auto& n : v.whole) {
      whole.insert(n);
      removed.erase(n);
    }
    changed.insert(v.changed.begin(), v.changed.end());
    for (auto& n : v.removed) {
      removed.insert(n);
      whole.erase(n);
      changed.erase(n);
    }
  }
  wire_msg::node_table t;
  t.base = base;
  t.version = version_;
  for (auto& n : whole)
    add_row(t, n, true, peers, now);
  for (auto& n : changed)
    if (!whole.count(n)) add_row(t, n, false, peers, now);
  t.removed.assign(removed.begin(), removed.end());
  return t;
}

void table_feed::send_to_all(const std::vector<std::string>& to,
                             const wire_msg::node_table& table, membership_port& port) {
  if (to.empty()) return;
  for (auto& n : to)
    sent_version_[n] = table.version;
  for (auto& n : port.send_all(to, table))
    sent_version_.erase(n);
}

void table_feed::trim_log() {
  // The oldest version a node that reads no loads holds (one with none gets the table
  // whole: it needs no log).
  auto oldest = version_;
  for (auto& [name, v] : sent_version_)
    if (!reader(name)) oldest = std::min(oldest, v);
  while (!log_.empty() && (log_.front().version <= oldest || log_.size() > max_log)) {
    log_floor_ = std::max(log_floor_, log_.front().version);
    log_.pop_front();
  }
}

} // namespace swarm::actors
