#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <caf/fwd.hpp>

#include "actors/scheduling/waiting_demand.hpp"
#include "base/result.hpp"
#include "framework/detail/core.hpp"
#include "framework/options.hpp"
#include "framework/resources.hpp"

namespace swarm::actors {

/// Where each bundle goes (a node per bundle, in order) given the room each live node
/// has free (`rooms`, in the order to try them); nothing when `strategy` cannot place
/// them all now.
std::optional<std::vector<std::string>>
place_bundles(const std::vector<resource_set>& bundles, placement_strategy strategy,
              const std::vector<std::pair<std::string, resource_set>>& rooms);

/// What a placement-group request asks of the global scheduler.
struct group_request {
  enum class kind { create, wait, query, remove } what = kind::wait;
  uint64_t id = 0;
  placement_group_options options; // for create
  /// Runs on the scheduler: create answers at once (accepted, or why never), wait once
  /// the group is placed (where its bundles are) or removed, query at once (placed, or
  /// why not), remove once it is gone.
  std::function<void(result<detail::group_placement>)> then;
};

/// The placement groups the global scheduler keeps: their bundles reserved against the
/// nodes' totals, all or none; those that do not fit wait (tried by id, oldest first)
/// and are placed when room appears (a node joins, a group goes). A group with a bundle
/// on a node that died is placed again as a whole.
class group_table {
public:
  using node_totals = std::map<std::string, std::pair<resource_set, bool>>; // alive

  /// Handles `r` against the nodes `nodes`.
  void handle(group_request r, const node_totals& nodes);
  /// The nodes changed (a join, a death, new totals): groups placed again as needed.
  void nodes_changed(const node_totals& nodes);
  /// What placed groups hold on `node`.
  resource_set reserved_on(const std::string& node) const;
  /// Whether there is no group at all (then nothing is reserved anywhere).
  bool empty() const { return groups_.empty(); }
  /// The totals of the node types an autoscaler may still start: a group whose bundles
  /// fit one of them (but no node) waits for it instead of being refused.
  void set_scalable(std::vector<resource_set> totals) { scalable_ = std::move(totals); }
  /// The bundles of the groups that wait to be placed, oldest first: a strict_pack
  /// group's summed into one demand, a strict_spread group's kept apart.
  std::vector<waiting_demand> waiting_bundles() const;

private:
  struct group {
    placement_group_options options;
    std::vector<std::string> nodes; // empty while waiting
    std::vector<std::function<void(result<detail::group_placement>)>> waiters;
    detail::group_placement placement() const { return {nodes, options.bundles}; }
  };
  void place_waiting(const node_totals& nodes);
  // Whether `r` fits a node of `nodes` or a node type the autoscaler may start.
  bool fits_somewhere(const resource_set& r, const node_totals& nodes) const;
  std::map<uint64_t, group> groups_;
  std::vector<resource_set> scalable_;
};

/// A node's placement-group calls (see `core::create_group` and the others), answered
/// by the global scheduler `scheduler`.
result<void> create_group_at(const caf::actor& scheduler, uint64_t id,
                             placement_group_options o);
result<detail::group_placement> wait_group_at(const caf::actor& scheduler, uint64_t id,
                                              std::chrono::milliseconds timeout);
result<void> remove_group_at(const caf::actor& scheduler, uint64_t id);

} // namespace swarm::actors
