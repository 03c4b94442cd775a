#pragma once

// What every subsystem of a node's system actors shares: the verbs several of them answer
// to, and the in-process task and actor values their messages carry. These never leave
// the process, so they carry pointers; what crosses nodes is declared in transport/.

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>

#include "framework/detail/actor_record.hpp"
#include "framework/detail/task_spec.hpp"
#include "transport/wire_message.hpp"

namespace swarm::actors {

/// The connection to a node closed: (lost_atom, peer, why).
using lost_atom = caf::atom_constant<caf::atom("lost")>;
/// A timer an actor sends itself: (tick_atom).
using tick_atom = caf::atom_constant<caf::atom("tick")>;
/// How many entries an actor keeps, for stats and tests: (count_atom) -> uint64_t.
using count_atom = caf::atom_constant<caf::atom("count")>;
using stats_atom = caf::atom_constant<caf::atom("stats")>;
using list_atom = caf::atom_constant<caf::atom("list")>;
using timeline_atom = caf::atom_constant<caf::atom("timeline")>;
using kill_atom = caf::atom_constant<caf::atom("kill")>;
using cancel_atom = caf::atom_constant<caf::atom("cancel")>;
using put_atom = caf::atom_constant<caf::atom("put")>;
using get_atom = caf::atom_constant<caf::atom("get")>;
using erase_atom = caf::atom_constant<caf::atom("erase")>;
using lookup_atom = caf::atom_constant<caf::atom("lookup")>;
using forget_atom = caf::atom_constant<caf::atom("forget")>;
using update_atom = caf::atom_constant<caf::atom("update")>;

} // namespace swarm::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::detail::task_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::detail::actor_record_ptr)
// A result from another node, passed between the owner and the actor directory.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::wire_msg::task_result)
