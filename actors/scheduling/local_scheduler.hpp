#pragma once

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/fwd.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "actors/scheduling/protocol.hpp"
#include "framework/object_id.hpp"
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
  /// Workers beyond the CPUs for tasks that would otherwise wait for a running task of
  /// lower priority to end: such a task starts at once on one, a CPU lent to it (the
  /// cores are shared while it runs); the rest of its demand must be free. 0: it waits.
  size_t priority_reserve = 1;
  /// Only tasks of functions whose runs on this node took less than this, on average,
  /// are pipelined; others wait for a free worker, so that a short task never waits
  /// behind a long one while another worker frees up.
  std::chrono::microseconds pipeline_below{1000};
  /// A worker fallen idle takes a task pipelined to another that has waited this long
  /// (one that waits less will soon run where it is).
  std::chrono::microseconds steal_after{1000};
  /// Tasks that ended kept for the timeline (a ring; 0 keeps none).
  size_t timeline_events = 10000;
  detail::core* node = nullptr;
  const topology* topo = nullptr;
  /// Where submitted tasks wait; owned by the node, outlives scheduler restarts.
  task_inbox* inbox = nullptr;
  /// Starts a worker; empty: `spawn_cpu_worker` (tests start workers they step).
  std::function<caf::actor(caf::actor_system&, const worker_config&)> spawn_worker;
  /// Once no task has been queued or at a worker for this long after some ran, the
  /// memory they freed goes back to the system: `trim`, or, when empty, the allocator's
  /// `malloc_trim(0)`.
  std::chrono::milliseconds trim_after{1000};
  std::function<void()> trim;
};

/// The tasks of one function a node's scheduler has seen since it started.
struct function_counts {
  uint64_t submitted = 0; ///< queued here (a retry is not counted again)
  uint64_t running = 0;   ///< at a worker now
  uint64_t finished = 0;  ///< ended with a value
  uint64_t failed = 0;    ///< ended with an error
};
using counts_by_function = std::map<std::string, function_counts>;

/// A task that ended on this node, for the timeline.
struct task_event {
  object_id id; ///< its result object
  std::string function;
  bool failed = false;
  uint32_t worker = 0;
  int64_t queued_us = 0; ///< wall clock, microseconds since the epoch
  int64_t started_us = 0;
  int64_t ended_us = 0;
  std::string error; ///< why it failed; empty when it did not
};

/// How many of the last failed tasks a scheduler keeps, with their errors.
inline constexpr size_t failures_kept = 100;

/// What a node's scheduler holds now.
struct scheduler_load {
  size_t queued = 0;     ///< ready, waiting for a worker
  size_t dispatched = 0; ///< at workers (running or pipelined behind)
  size_t workers = 0;
  size_t blocked = 0; ///< workers blocked in `get`
  size_t running = 0; ///< tasks running now
  resource_set available;
  /// Queued and dispatched tasks not finished, by priority, highest first.
  std::vector<std::pair<int32_t, uint32_t>> by_priority;
};

/// A task the scheduler holds, for `swarm list tasks`.
struct task_row {
  std::string id; ///< its result object
  std::string function;
  std::string state; ///< "queued", "dispatched" (at a worker, next) or "running"
  int32_t priority = 0;
  uint32_t attempt = 1;
};

/// Spawns the local scheduler: it drains the inbox when woken (and at start, taking over
/// from a crashed predecessor), queues ready tasks by priority, accounts the node's
/// resources per task, and leases workers to tasks of one resource shape, pipelining
/// further tasks of that shape to a leased worker. A worker blocked in `get` hands its
/// resources back and its queued tasks are moved to other workers; more workers start
/// (up to `max_workers` not blocked) when the others are blocked. Tasks of a dead worker
/// are retried. `(stats_atom) -> scheduler_load`;
/// `(stats_atom, by_function_atom) -> counts_by_function`;
/// `(stats_atom, list_atom) -> std::vector<task_row>`;
/// `(stats_atom, timeline_atom) -> std::vector<task_event>`, the last
/// `scheduler_config::timeline_events` tasks that ended, oldest first;
/// `(stats_atom, failures_atom) -> std::vector<task_event>`, the last `failures_kept`
/// tasks that failed, with their errors, oldest first.
/// `(gpu_hold_atom, uint64_t actor, double gpus, double gpu_memory) ->
/// std::vector<uint32_t>`: an actor holds GPUs (and device memory) for its life; the
/// answer, its devices, comes once they are free, ahead of queued tasks;
/// `(gpu_unhold_atom, uint64_t actor)` gives them back.
/// `(cancel_atom, others_atom, uint64_t first, uint64_t last) -> uint64_t`: cancels every
/// task whose result's owner is outside [first, last] (queued ones fail `cancelled`,
/// running ones are asked to stop), and says how many: with this node's owners' range,
/// the work other nodes placed in a life of it that the head ended, which their owners
/// ran again elsewhere.
caf::actor spawn_local_scheduler(caf::actor_system& sys, const scheduler_config& cfg);

} // namespace swarm::actors

// Only sent within a node.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::actors::counts_by_function)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::actors::scheduler_load)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<swarm::actors::task_row>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<swarm::actors::task_event>)
