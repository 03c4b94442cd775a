#pragma once

#include "framework/supervision.hpp"

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/atom.hpp>
#include <caf/error.hpp>
#include <caf/expected.hpp>
#include <caf/fwd.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace swarm::detail {

/// A child spec: its policy and how to start it.
struct supervised_child {
  child_policy policy;
  /// Spawns the child and returns it, or an invalid handle (or throws) when it cannot
  /// start. Runs inside the supervisor, which is `parent`.
  std::function<caf::actor(caf::local_actor& parent)> start;
  /// Told, inside the supervisor, when the child will not be started again (removed, or
  /// its supervisor ends); may be empty.
  std::function<void(const std::string& why)> gone;
};

/// Everything a supervisor needs; children start in the order given.
struct supervisor_config {
  strategy how = strategy::one_for_one;
  restart_intensity intensity;
  std::vector<supervised_child> children;
  /// Optional observer, called inside the supervisor (any scheduler thread) with events
  /// such as "start a", "exit a failure", "stop a", "kill a", "restart a", "remove a",
  /// "start_failed a", "shutdown", "escalate"; for logs and tests.
  std::function<void(const std::string& event)> on_event;
};

/// Why a supervisor itself exited or refused a request.
enum class supervisor_error : uint8_t {
  intensity_exceeded = 1, ///< more restarts than its intensity allows: escalated
  start_failed,           ///< a child failed to start when the supervisor started
  unknown_child,          ///< no child has the requested id
  child_not_running,      ///< the child is removed or between stop and restart
};

/// Makes a CAF error of category `swarm_sup`.
caf::error make_error(supervisor_error x);

const char* to_string(supervisor_error x);

/// Request to a supervisor: (which_child_atom, std::string id) -> caf::actor, or a
/// `supervisor_error` when no running child has that id.
using which_child_atom = caf::atom_constant<caf::atom("whichchild")>;

/// Maps the exit reason of a CAF actor to how a child ended: `normal` (or none) is
/// normal, `user_shutdown` is shutdown, anything else is failure.
exit_kind classify(const caf::error& reason);

/// Spawns a supervisor: starts the children in order (each monitored), restarts them per
/// `cfg.how` when they exit, and escalates by exiting with `intensity_exceeded` when the
/// intensity is exceeded. An exit message with a non-normal reason (e.g. `user_shutdown`
/// from its parent) stops the children in reverse start order, then the supervisor exits
/// with that reason. A supervisor may be the child of another one.
/// @throws std::invalid_argument when two children share an id.
caf::actor spawn_supervisor(caf::actor_system& sys, supervisor_config cfg);

/// Asks supervisor `sup` for the current actor of child `id`, blocking the caller for at
/// most `timeout`. Not for actor code: it blocks.
caf::expected<caf::actor>
which_child(caf::actor_system& sys, const caf::actor& sup, const std::string& id,
            std::chrono::milliseconds timeout = std::chrono::seconds(5));

} // namespace swarm::detail
