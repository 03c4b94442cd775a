#pragma once

#include <caf/actor.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/fwd.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "actors/node/membership.hpp"
#include "actors/node/node_provider.hpp"
#include "base/node_log.hpp"
#include "framework/cluster_config.hpp"
#include "transport/wire_message.hpp"

namespace swarm::actors {

/// What the head's autoscaler works with.
struct autoscaler_setup {
  autoscaler_config cfg;
  provider_target target;
  /// The head's global scheduler: the work that waits for a node, and the node types
  /// that may still start.
  caf::actor global;
  /// The head's view of the node table (outlives the autoscaler).
  const membership_view* members = nullptr;
  /// Asks node `node` to stop, saying why (it drains as any node stopped does).
  std::function<void(const std::string& node, const std::string& why)> stop;
  node_log log;
  std::chrono::milliseconds tick{500};
  /// How long a node asked to stop may take before its provider ends it; and how long
  /// one found dead still counts as its type's (it may join again) unless its process
  /// ended.
  std::chrono::milliseconds stop_grace{20'000};
};

/// Spawns the head's autoscaler: each tick it asks the global scheduler what work waits
/// for a node, follows its nodes in the node table (starting, up, idle, gone), and acts
/// on `autoscale_plan`'s decisions through a `node_provider` (on a thread of its own: its
/// commands block). A type whose launches failed 5 times in a row is given up: the work
/// that only it fits fails, saying why. Answers:
///   (launches_atom) -> vector<wire_msg::node_launch>   its nodes and failed types
/// An error when the provider's folder cannot be made.
result<caf::actor> spawn_autoscaler(caf::actor_system& sys, autoscaler_setup setup);

} // namespace swarm::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<swarm::wire_msg::node_launch>)
