#pragma once

#include <caf/fwd.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "framework/resources.hpp"
#include "base/result.hpp"

namespace swarm::actors {

/// Work spilled to the head, to be placed on some node of the cluster.
struct placement_request {
  resource_set demand;
  /// Bytes of the task's inputs already stored on each node.
  std::vector<std::pair<std::string, uint64_t>> input_bytes;
  /// Runs on the scheduler with the chosen node, or why none fits.
  std::function<void(result<std::string>)> then;
};

/// Spawns the head's global scheduler. Its view of the nodes comes from the node table:
///   (update_atom, name, total, queued, alive)   a join, a heartbeat or a failure
///   (place_atom, placement_request)             picks a node and calls `then`
/// It picks among live nodes whose total resources fit the demand: the one holding the
/// most bytes of the task's inputs, then the one with the least queued work. What it
/// places counts against a node until that node's next heartbeat.
caf::actor spawn_global_scheduler(caf::actor_system& sys);

/// Why `demand` cannot be placed when only dead nodes could hold it: `dead` lists them,
/// each quoted ('a', 'b'). The truth is that they are down, not that it is infeasible.
inline error only_dead_nodes_fit(const resource_set& demand, const std::string& dead) {
  return {errc::node_unreachable,
          "demands " + demand.to_string() + ": the nodes that have it are dead (" + dead + ")"};
}

/// Appends `name`, quoted, to a list built for `only_dead_nodes_fit`.
inline void add_quoted(std::string& list, const std::string& name) {
  list += (list.empty() ? "'" : ", '") + name + "'";
}

} // namespace swarm::actors
