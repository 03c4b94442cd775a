#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "framework/resources.hpp"

namespace swarm {

/// A bundle of a placement group: work placed in it runs on the node that holds it.
struct bundle_ref {
  /// The group's id; 0: none.
  uint64_t group = 0;
  /// The bundle's index in the group.
  uint32_t index = 0;
};

/// How one task is run.
struct task_options {
  /// What the task holds while it runs; by default one CPU.
  resource_set resources = resource_set::cpus(1);
  /// Re-runs after the worker running it died; user exceptions only with
  /// `retry_exceptions`.
  uint32_t max_retries = 3;
  /// Whether an exception in user code also counts as a failure to retry.
  bool retry_exceptions = false;
  /// Higher runs first among queued tasks.
  int32_t priority = 0;
  /// The job the task belongs to (empty: the default job); the tasks it submits belong
  /// to it too. Queued tasks of one priority from several jobs get a node's workers in
  /// proportion to their jobs' `job_share`: one job cannot starve another.
  std::string job;
  /// The weight of the task's job against the other jobs (see `job`); above zero.
  double job_share = 1;
  /// Runs the task on this node of the cluster; empty lets the schedulers choose.
  std::string node;
  /// Keeps the result on this many distinct nodes of a cluster (as many as there are,
  /// at most): the node that made it copies it to the least busy others before its
  /// owner hears of it, so it outlives `replicas - 1` of them without running again, and
  /// a copy lost with its node is made again on another. 1: only where it was made.
  uint32_t replicas = 1;
  /// Runs the task on this many distinct other nodes of a cluster at once (those that
  /// can run it, least busy first): the first result wins, the copies that have not
  /// started are cancelled, and the others' results are dropped. When the node of one
  /// copy dies, the result comes from another, with no retry and no delay. 1: one run.
  /// Ignored with `node` set; `replicas` is ignored with it.
  uint32_t redundancy = 1;
  /// For a streaming task (one writing to a `stream_writer`): how many items it may
  /// write ahead of what its reader took; then it waits for the reader. Its items run
  /// once (no `redundancy`).
  uint32_t stream_window = 16;
  /// Latency-critical: across nodes it travels on the control lane, ahead of the calls
  /// and tasks queued on the call lane and of bulk object transfers, and so does its
  /// result on the way back.
  bool latency_critical = false;
  /// Runs the task in this bundle of a placement group (on its node, demanding no more
  /// than it holds); the group must be placed. Overrides `node`.
  bundle_ref bundle;
};

/// How a placement group spreads its bundles over nodes (Ray's strategies).
enum class placement_strategy {
  pack,         ///< as few nodes as fit, one if it can
  spread,       ///< as many distinct nodes as can hold them
  strict_pack,  ///< all on one node, or wait until one has the room
  strict_spread ///< each on a node of its own, or wait until there are enough
};

/// A gang of resource bundles reserved together, all or none.
struct placement_group_options {
  std::vector<resource_set> bundles;                      ///< what each bundle reserves
  placement_strategy strategy = placement_strategy::pack; ///< how bundles share nodes
};

/// How one object is put.
struct put_options {
  /// Keeps the value on this many distinct nodes of a cluster (as many as there are, at
  /// most): copied from this one to the least busy others right after the put, and
  /// copied again to another node when one holding it is lost. Readers elsewhere pull
  /// from the nearest and least busy copies. 1: only on this node.
  uint32_t replicas = 1;
};

/// How one actor is created.
struct actor_options {
  /// Restarts after a crash (an `actor_failure` thrown by a method); 0 never restarts.
  uint32_t max_restarts = 0;
  /// A name under which any caller can find the actor; empty for none. A named actor
  /// lives until killed or the runtime stops, even without handles.
  std::string name;
  /// Runs the actor on a thread of its own. Needed when its methods block on futures
  /// made by other actors; otherwise it shares the node's scheduler threads.
  bool dedicated_thread = false;
  /// How many of its calls that returned a future (async methods) may wait for it at
  /// once, as Ray's `max_concurrency` of async actors; later calls wait their turn, in
  /// order. 0 counts as 1.
  uint32_t max_concurrency = 1000;
  /// Creates the actor on this node of the cluster; empty: on this node, or wherever
  /// `resources` fit when they do not fit here.
  std::string node;
  /// With `node`: when that node is lost, a restart (within `max_restarts`) goes
  /// wherever `resources` fit, at once; when every node they fit is dead for now, it
  /// waits for one (up to the cluster's `join_wait`), as an unpinned actor's does, and
  /// its calls wait with it. Otherwise the actor waits for its node to come
  /// back (up to the cluster's `join_wait`), restarts there, or dies saying so: a pinned
  /// actor never moves silently.
  bool move_if_node_lost = false;
  /// What the actor holds while it lives (used to place it in a cluster); none by
  /// default.
  resource_set resources;
  /// Saves the actor's state (`actor::on_checkpoint`) after every this many calls; the
  /// latest state is restored on each restart. 0: never saved.
  uint32_t checkpoint_every = 0;
  /// With `checkpoint_every` and a `name`: each state saved also goes to the control
  /// store, kept like a durable object (replicated, and persisted with the cluster's
  /// `gcs_dir`), and an actor spawned again under this name (after its node, or the
  /// whole cluster, restarted) starts from the last one.
  bool durable_checkpoints = false;
  /// Calls in flight when the actor's node died are sent again, this many times at most,
  /// to the actor restarted elsewhere; 0: they fail with `actor_died`.
  uint32_t max_task_retries = 0;
  /// With `checkpoint_every`: each state saved keeps the ids and answers of the last
  /// this many calls of each caller (of the 64 callers that called last), so that a
  /// call sent again after its answer was lost (its node died once the state with its
  /// effect was saved) is answered from the state instead of running twice: calls run
  /// exactly once while a caller has no more calls to the actor in flight than this. An
  /// answer that is not plain data (a user type, a ref, a device buffer, a future) or
  /// is over 64 KiB is not kept: such a call sent again fails with `object_lost`. 0:
  /// calls sent again run again (at least once).
  uint32_t answers_kept = 16;
  /// Creates the actor in this bundle of a placement group (on its node, demanding no
  /// more than it holds); the group must be placed. Overrides `node`.
  bundle_ref bundle;
};

} // namespace swarm
