#pragma once

#include <caf/fwd.hpp>

#include <cstddef>
#include <functional>

#include "framework/resources.hpp"

namespace swarm::detail {
class core;
} // namespace swarm::detail

namespace swarm::actors {

class task_inbox;
class topology;
struct worker_config;

/// Sizes of a node's task worker pool.
struct scheduler_config {
  resource_set total;
  size_t initial_workers = 1;
  /// Most workers not blocked in `get`; blocked ones do not count (they hold no CPU).
  size_t max_workers = 4;
  /// Tasks queued at one worker beyond the one it runs.
  size_t pipeline_depth = 16;
  detail::core* node = nullptr;
  const topology* topo = nullptr;
  /// Where submitted tasks wait; owned by the node, outlives scheduler restarts.
  task_inbox* inbox = nullptr;
  /// Starts a worker; empty: `spawn_cpu_worker` (tests start workers they step).
  std::function<caf::actor(caf::actor_system&, const worker_config&)> spawn_worker;
};

/// Spawns the local scheduler: it drains the inbox when woken (and at start, taking over
/// from a crashed predecessor), queues ready tasks by priority, accounts the node's
/// resources per task, and leases workers to tasks of one resource shape, pipelining
/// further tasks of that shape to a leased worker. A worker blocked in `get` hands its
/// resources back and its queued tasks are moved to other workers; more workers start
/// (up to `max_workers` not blocked) when the others are blocked. Tasks of a dead worker
/// are retried.
caf::actor spawn_local_scheduler(caf::actor_system& sys, const scheduler_config& cfg);

} // namespace swarm::actors
