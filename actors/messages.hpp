#pragma once

// Messages between the system actors of one node. They never leave the process, so they
// carry pointers; what crosses nodes is defined in transport/.

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "framework/detail/task_spec.hpp"

namespace swarm::actors {

using wake_atom = caf::atom_constant<caf::atom("wake")>;
using submit_atom = caf::atom_constant<caf::atom("submit")>;
using run_atom = caf::atom_constant<caf::atom("run")>;
using done_atom = caf::atom_constant<caf::atom("done")>;
using blocked_atom = caf::atom_constant<caf::atom("blocked")>;
using unblocked_atom = caf::atom_constant<caf::atom("unblocked")>;
using call_atom = caf::atom_constant<caf::atom("call")>;
using resume_atom = caf::atom_constant<caf::atom("resume")>;
using next_atom = caf::atom_constant<caf::atom("next")>;
using end_atom = caf::atom_constant<caf::atom("hostend")>;
using kill_atom = caf::atom_constant<caf::atom("kill")>;
using stats_atom = caf::atom_constant<caf::atom("stats")>;
using by_function_atom = caf::atom_constant<caf::atom("byfunc")>;
using list_atom = caf::atom_constant<caf::atom("list")>;
using timeline_atom = caf::atom_constant<caf::atom("timeline")>;
using failures_atom = caf::atom_constant<caf::atom("failures")>;
using register_atom = caf::atom_constant<caf::atom("register")>;
using lookup_atom = caf::atom_constant<caf::atom("lookup")>;
using forget_atom = caf::atom_constant<caf::atom("forget")>;
using put_atom = caf::atom_constant<caf::atom("put")>;
using get_atom = caf::atom_constant<caf::atom("get")>;
using erase_atom = caf::atom_constant<caf::atom("erase")>;
using scan_atom = caf::atom_constant<caf::atom("scan")>;
using update_atom = caf::atom_constant<caf::atom("update")>;
using place_atom = caf::atom_constant<caf::atom("place")>;
using group_atom = caf::atom_constant<caf::atom("group")>;
using chain_atom = caf::atom_constant<caf::atom("chain")>;
using cancel_atom = caf::atom_constant<caf::atom("cancel")>;

/// A task handed to a worker for one dispatch epoch.
struct dispatch {
  detail::task_ptr task;
  uint64_t epoch = 0;
  /// The GPUs its worker's lease holds (`context::gpu_ids`).
  std::vector<uint32_t> gpus = {};
};

} // namespace swarm::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::detail::task_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::actors::dispatch)

#include "framework/detail/actor_record.hpp"

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::detail::actor_record_ptr)

#include "actors/gcs_shard.hpp"

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::actors::table_row)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<swarm::actors::table_row>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::wire_msg::gcs_chain)

#include "actors/global_scheduler.hpp"

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::actors::placement_request)

#include "actors/placement_groups.hpp"

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::actors::group_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::actors::node_report)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::resource_set)
