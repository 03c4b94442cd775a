#pragma once

#include <caf/actor_clock.hpp>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "actors/node/membership.hpp"
#include "transport/wire_message.hpp"

namespace swarm::actors {

/// What may change in `p`'s row between its joins, its age as of `now`.
wire_msg::node_change change_of(const std::string& name, const peer_view& p,
                                caf::actor_clock::time_point now);

/// Whether `a` and `b` hold the same state and load (their ages aside).
bool same_state(const wire_msg::node_change& a, const wire_msg::node_change& b);

/// Whether `a` and `b` differ in state: alive, leaving (not load).
inline bool state_differs(const wire_msg::node_change& a,
                          const wire_msg::node_change& b) {
  return a.alive != b.alive || a.leaving != b.leaving;
}

/// The head's node table as it goes out to the other nodes. It is versioned: each tick's
/// change is encoded once for all nodes that hold the version before, and the table goes
/// whole to a node that holds another (it joined, missed a change, or was cut off).
///
/// Only the nodes that place work by the others' loads (`readers`: they spill tasks or
/// pick nodes by load, and say so in their heartbeats) get every change. The others get
/// changes of state only: a row new or joined again, a node dying, coming back, leaving
/// or gone. Under load the nodes' loads change every tick, and sent to all N nodes they
/// cost the head N² rows a tick; sent to the readers, N rows for each. A node that
/// starts reading gets the table whole, loads as of now.
class table_feed {
public:
  /// Versions start at `first` (the wall clock: a restarted head's never continue an
  /// earlier head's).
  explicit table_feed(uint64_t first);

  uint64_t version() const { return version_; }

  /// `name`'s row is new or joined again: it goes whole to the others, and `name` gets
  /// the table whole.
  void joined(const std::string& name);
  /// `name`'s row changed: its load, and its state too when `state`.
  void changed(const std::string& name, bool state);
  /// `name` left the table.
  void removed(const std::string& name);
  /// `name` gets the table whole with the next send (it asked: it missed a change).
  void resend(const std::string& name);
  /// Whether `name` places work by the others' loads, as its heartbeat says.
  void set_reader(const std::string& name, bool reads);
  bool reader(const std::string& name) const { return readers_.count(name) > 0; }

  /// Sends each of `to` (the live peers) what it lacks of `peers`, each message encoded
  /// once for all that get it.
  void send(const peer_table& peers, const std::vector<std::string>& to,
            caf::actor_clock::time_point now, membership_port& port);
  /// Sends `to` the table whole now.
  void send_whole(const std::string& to, const peer_table& peers,
                  caf::actor_clock::time_point now, membership_port& port);
  /// The table whole, as of the current version.
  wire_msg::node_table whole_table(const peer_table& peers,
                                   caf::actor_clock::time_point now) const;

private:
  // The rows of one version that changed in state, for the nodes that read no loads.
  struct state_change {
    uint64_t version = 0;
    std::set<std::string> whole, changed;
    std::vector<std::string> removed;
  };

  // What changed in state after version `base`, as a change of `base` to the current
  // version.
  wire_msg::node_table states_since(uint64_t base, const peer_table& peers,
                                    caf::actor_clock::time_point now) const;
  // Sends `table` to each of `to`; what it sent them is their version.
  void send_to_all(const std::vector<std::string>& to, const wire_msg::node_table& table,
                   membership_port& port);
  // Drops the state changes every node that reads no loads holds, and the oldest past
  // `max_log`: a node behind them gets the table whole.
  void trim_log();

  static constexpr size_t max_log = 256;

  uint64_t version_;
  // Since the last send: rows to send whole, rows whose state or load changed, rows
  // that left; and which changed in state.
  std::set<std::string> whole_, changed_, state_changed_;
  std::vector<std::string> removed_;
  // The version each peer was sent last (absent: it gets the table whole).
  std::map<std::string, uint64_t> sent_version_;
  std::set<std::string> readers_;
  // The versions that changed in state, oldest first; a base older than `log_floor_`
  // cannot be served from it.
  std::deque<state_change> log_;
  uint64_t log_floor_;
};

} // namespace swarm::actors
