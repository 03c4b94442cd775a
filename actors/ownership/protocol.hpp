#pragma once

// The ownership subsystem's verbs: the atoms of the messages its actors answer to.

#include <caf/atom.hpp>

namespace swarm::actors {

using track_atom = caf::atom_constant<caf::atom("track")>;
using result_atom = caf::atom_constant<caf::atom("result")>;
using retry_atom = caf::atom_constant<caf::atom("retry")>;
using borrow_atom = caf::atom_constant<caf::atom("borrow")>;
using unborrow_atom = caf::atom_constant<caf::atom("unborrow")>;
using barrier_atom = caf::atom_constant<caf::atom("barrier")>;
using borrows_atom = caf::atom_constant<caf::atom("borrows")>;
using placed_atom = caf::atom_constant<caf::atom("placed")>;
using stream_atom = caf::atom_constant<caf::atom("stream")>;

} // namespace swarm::actors
