#pragma once

#include <caf/actor_addr.hpp>
#include <caf/fwd.hpp>

#include <cstddef>

namespace swarm::detail {
class core;
} // namespace swarm::detail

namespace swarm::actors {

class topology;

/// Where a worker runs and whom it reports to.
struct worker_config {
  size_t index = 0;
  /// The local scheduler, held weakly: it owns the workers.
  caf::actor_addr scheduler;
  detail::core* node = nullptr;
  /// Pins the worker's thread to a core when set.
  const topology* pin_to = nullptr;
};

/// Spawns a task worker on a thread of its own (`detached`; tests step it on the test
/// coordinator). It runs the tasks the scheduler dispatches to it, one at a time in
/// order, and reports each as done; while a task blocks in `get`/`wait` it tells the
/// scheduler, which lends the task's resources out.
caf::actor spawn_cpu_worker(caf::actor_system& sys, const worker_config& cfg,
                            bool detached = true);

} // namespace swarm::actors
