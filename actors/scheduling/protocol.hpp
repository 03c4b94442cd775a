#pragma once

// The scheduling subsystem's messages: a node's task queue and workers (submit, run,
// done, blocked), the local scheduler's reports, and the global scheduler's placements
// and placement groups.

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>

#include <cstdint>
#include <vector>

#include "actors/common/protocol.hpp"
#include "actors/scheduling/global_scheduler.hpp"
#include "actors/scheduling/placement_groups.hpp"
#include "framework/detail/task_spec.hpp"

namespace swarm::actors {

using wake_atom = caf::atom_constant<caf::atom("wake")>;
using submit_atom = caf::atom_constant<caf::atom("submit")>;
using run_atom = caf::atom_constant<caf::atom("run")>;
using done_atom = caf::atom_constant<caf::atom("done")>;
using blocked_atom = caf::atom_constant<caf::atom("blocked")>;
using unblocked_atom = caf::atom_constant<caf::atom("unblocked")>;
using by_function_atom = caf::atom_constant<caf::atom("byfunc")>;
using failures_atom = caf::atom_constant<caf::atom("failures")>;
using place_atom = caf::atom_constant<caf::atom("place")>;
using group_atom = caf::atom_constant<caf::atom("group")>;
/// The global scheduler: the node types the autoscaler may still start, and the demands
/// of the work that waits for one.
using scalable_atom = caf::atom_constant<caf::atom("scalable")>;
using waiting_atom = caf::atom_constant<caf::atom("waiting")>;
/// The local scheduler: every task whose result's owner is outside the range named.
using others_atom = caf::atom_constant<caf::atom("others")>;

/// A task handed to a worker for one dispatch epoch.
struct dispatch {
  detail::task_ptr task;
  uint64_t epoch = 0;
  /// The GPUs its worker's lease holds (`context::gpu_ids`).
  std::vector<uint32_t> gpus = {};
};

using gpu_hold_atom = caf::atom_constant<caf::atom("gpuhold")>;
using gpu_unhold_atom = caf::atom_constant<caf::atom("gpuunhold")>;
/// The scheduler's own timer: the node stayed idle, memory goes back.
using trim_atom = caf::atom_constant<caf::atom("trim")>;

} // namespace swarm::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::actors::dispatch)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::actors::placement_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::actors::group_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::actors::node_report)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::resource_set)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<swarm::resource_set>)
