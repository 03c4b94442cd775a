#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "actors/scheduling/waiting_demand.hpp"
#include "framework/cluster_config.hpp"
#include "framework/resources.hpp"

namespace swarm::actors {

/// A node the autoscaler started, as it tracks it.
struct scaled_node {
  enum class phase { launching, up, stopping };
  using time_point = std::chrono::steady_clock::time_point;

  std::string name;
  size_t type = 0; ///< its index in the autoscaler's node types
  phase state = phase::launching;
  time_point since; ///< when it entered `state`
  /// Up: since when it has had no work and held no object of its own.
  std::optional<time_point> idle_since;
};

/// What the autoscaler does on a tick.
struct scale_action {
  enum class kind {
    launch, ///< start a node of `type`
    stop,   ///< stop `node`: idle past its type's timeout
    fail,   ///< `node` did not join within the launch timeout: a failed launch
  };
  kind what = kind::launch;
  size_t type = 0;
  std::string node;
  std::string why;
};

/// Decides what the autoscaler starts and stops, from the work no live node fits and the
/// nodes it started; owns each node type's back-off after failed launches. Pure: the
/// caller passes the time.
///
/// Each tick: a launch not joined within `launch_timeout` fails; each type is kept at its
/// `min`; each waiting demand is packed into the room of the nodes still starting (never
/// beside a bundle of its own strict_spread group), else starts a node of the first type
/// that fits it; a node idle past its type's
/// `idle_timeout` stops, never below `min` and never while waiting work would fit it.
/// Never more than `max` nodes of a type, nor more starting at once than the config's
/// `launch_cap` of the cluster's `live` nodes (`max_launching`, or `upscaling_speed`
/// times them); a type
/// whose launch failed is not tried again before its back-off (`retry_after`, doubling
/// with each failure in a row, up to a minute).
class autoscale_plan {
public:
  using time_point = scaled_node::time_point;

  explicit autoscale_plan(autoscaler_config cfg);

  std::vector<scale_action> decide(const std::vector<waiting_demand>& waiting,
                                   const std::vector<scaled_node>& nodes, time_point now,
                                   size_t live = 0);

  /// A launch of `type` failed at `now` (its command failed, or it did not join).
  void launch_failed(size_t type, time_point now);
  /// A node of `type` joined: its back-off starts over.
  void launch_joined(size_t type);
  /// Launches of `type` that failed in a row.
  size_t failures(size_t type) const { return types_.at(type).failures; }

  const autoscaler_config& config() const { return cfg_; }

private:
  struct type_state {
    size_t failures = 0;
    time_point next_try;
  };
  autoscaler_config cfg_;
  std::vector<type_state> types_;
};

} // namespace swarm::actors
