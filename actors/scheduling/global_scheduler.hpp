#pragma once

#include <caf/fwd.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.hpp"
#include "base/visibility.hpp"
#include "framework/resources.hpp"
#include "transport/wire_message.hpp"

namespace swarm::actors {

/// What work needs registered on the node it runs on: a task function, an actor type, or
/// nothing in particular (`name` empty).
struct work_needs {
  bool actor = false;
  std::string name;

  static work_needs function(std::string n) { return {false, std::move(n)}; }
  static work_needs actor_type(std::string n) { return {true, std::move(n)}; }
  /// "function 'f'", "actor type 'a'".
  std::string to_string() const {
    return (actor ? "actor type '" : "function '") + name + "'";
  }
};

/// What a node has registered, by name: the work it can run.
struct node_abilities {
  std::vector<std::string> functions;
  std::vector<std::string> actor_types;

  /// Whether work needing `w` can run there.
  bool can_run(const work_needs& w) const;
};

/// A node as the global scheduler sees it: its row of the node table.
struct node_report {
  resource_set total;
  /// Tasks placed there and not finished.
  uint64_t queued = 0;
  /// Of its tasks queued for or at its workers, how many of each priority (as of its last
  /// heartbeat).
  wire_msg::priority_counts by_priority;
  bool alive = false;
  node_abilities abilities;

  /// Of `queued`, those a task of `priority` would wait behind there: all but the
  /// lower-priority ones, which it passes while they have not started.
  uint64_t ahead_of(int32_t priority) const;
};

/// Work spilled to the head, to be placed on some node of the cluster.
struct placement_request {
  resource_set demand;
  work_needs needs;
  /// Its priority: nodes are compared by the work it would wait behind there.
  int32_t priority = 0;
  /// Bytes of the task's inputs already stored on each node.
  std::vector<std::pair<std::string, uint64_t>> input_bytes;
  /// Nodes to place it on only when no other can take it (where its owner lost it).
  std::vector<std::string> avoid;
  /// Runs on the scheduler with the chosen node, or why none fits.
  std::function<void(result<std::string>)> then;
};

/// Spawns the head's global scheduler. Its view of the nodes comes from the node table:
///   (update_atom, name, node_report)            a join, a heartbeat or a failure
///   (place_atom, placement_request)             picks a node and calls `then`
///   (scalable_atom, vector<resource_set>, why)  the autoscaler's node types it may
///                                               still start (why the others are not)
///   (waiting_atom) -> vector<waiting_demand>    the demands of the work that waits,
///                                               then the bundles of unplaced groups
///   (group_atom, group_request)                 makes, waits for or removes a
///                                               placement group (see `group_table`)
/// It picks among live nodes that have registered what the work needs and whose total
/// resources fit the demand: one where it fits outside what placement groups reserved,
/// then the one holding the most bytes of the task's inputs, then the one with the
/// least work the task would wait behind (of its priority or higher), then the least
/// queued work; a node the request says to avoid, only when no other fits. What it
/// places counts against a node until that node's next heartbeat.
/// Work no node has registered fails at once (`unregistered`), naming it and the nodes.
/// Work that fits no live node but a node type the autoscaler may start waits, in
/// order, until a node takes it or no type fits it any more.
SWARM_EXPORT caf::actor spawn_global_scheduler(caf::actor_system& sys);

/// Why `demand` cannot be placed when only dead nodes could hold it: `dead` lists them,
/// each quoted ('a', 'b'). The truth is that they are down, not that it is infeasible.
inline error only_dead_nodes_fit(const resource_set& demand, const std::string& dead) {
  return {errc::node_unreachable, "demands " + demand.to_string() +
                                      ": the nodes that have it are dead (" + dead + ")"};
}

inline bool node_abilities::can_run(const work_needs& w) const {
  if (w.name.empty()) return true;
  auto& names = w.actor ? actor_types : functions;
  return std::find(names.begin(), names.end(), w.name) != names.end();
}

/// Whether `n` registered what `w` needs (copies nothing: it runs for every submit).
inline bool registered(const wire_msg::node_info& n, const work_needs& w) {
  if (w.name.empty()) return true;
  auto& list = w.actor ? n.actor_types : n.functions;
  return std::any_of(list.begin(), list.end(),
                     [&](const wire_msg::capability& c) { return c.name == w.name; });
}

/// Of `queued` tasks of a node, those a task of `priority` would wait behind there: all
/// but the lower-priority ones, which it passes while they have not started.
inline uint64_t work_ahead(uint64_t queued, const wire_msg::priority_counts& by_priority,
                           int32_t priority) {
  uint64_t lower = 0;
  for (auto& [p, tasks] : by_priority)
    if (p < priority) lower += tasks;
  return queued > lower ? queued - lower : 0;
}

inline uint64_t node_report::ahead_of(int32_t priority) const {
  return work_ahead(queued, by_priority, priority);
}

/// What `n` has registered.
inline node_abilities abilities_of(const wire_msg::node_info& n) {
  node_abilities out;
  for (auto& f : n.functions)
    out.functions.push_back(f.name);
  for (auto& a : n.actor_types)
    out.actor_types.push_back(a.name);
  return out;
}

/// Appends `name`, quoted, to a list built for `only_dead_nodes_fit`.
inline void add_quoted(std::string& list, const std::string& name) {
  list += (list.empty() ? "'" : ", '") + name + "'";
}

} // namespace swarm::actors
