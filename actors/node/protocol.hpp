#pragma once

// The node subsystem's verbs: the atoms of the messages its actors answer to.

#include <caf/atom.hpp>

namespace swarm::actors {

using job_atom = caf::atom_constant<caf::atom("job")>;
using join_atom = caf::atom_constant<caf::atom("join")>;
using heartbeat_atom = caf::atom_constant<caf::atom("heartbeat")>;
using table_atom = caf::atom_constant<caf::atom("table")>;
using down_atom = caf::atom_constant<caf::atom("down")>;
using joined_atom = caf::atom_constant<caf::atom("joined")>;
/// Membership: the head found this life of the node dead (`node_fenced`).
using fenced_atom = caf::atom_constant<caf::atom("fenced")>;
using stopped_atom = caf::atom_constant<caf::atom("stopped")>;
/// (watch_atom, who, true): `who` gets (view_atom) each time the view is published;
/// false: no more.
using watch_atom = caf::atom_constant<caf::atom("watch")>;
using view_atom = caf::atom_constant<caf::atom("view")>;
/// The autoscaler: (launches_atom) -> its nodes and failed types, for `swarm status`.
using launches_atom = caf::atom_constant<caf::atom("launches")>;

} // namespace swarm::actors
