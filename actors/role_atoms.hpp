#pragma once

// Atoms more than one of the cluster node's role actors answers to.

#include <caf/atom.hpp>

namespace swarm::actors {

/// The connection to a node closed: (lost_atom, peer, why).
using lost_atom = caf::atom_constant<caf::atom("lost")>;
/// A timer an actor sends itself: (tick_atom).
using tick_atom = caf::atom_constant<caf::atom("tick")>;
/// How many entries an actor keeps, for stats and tests: (count_atom) -> uint64_t.
using count_atom = caf::atom_constant<caf::atom("count")>;

} // namespace swarm::actors
