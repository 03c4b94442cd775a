#pragma once

// The object subsystem's verbs: the atoms of the messages its actors answer to, and the
// key they name objects by.

#include <caf/atom.hpp>

#include <cstdint>
#include <utility>

namespace swarm::actors {

/// An object's id as a map key: (owner, seq).
using object_key = std::pair<uint64_t, uint64_t>;

using hold_atom = caf::atom_constant<caf::atom("hold")>;
using release_atom = caf::atom_constant<caf::atom("release")>;
using free_atom = caf::atom_constant<caf::atom("free")>;
using pull_atom = caf::atom_constant<caf::atom("pull")>;
using chunk_atom = caf::atom_constant<caf::atom("chunk")>;
using fetch_atom = caf::atom_constant<caf::atom("fetch")>;
using locate_atom = caf::atom_constant<caf::atom("locate")>;
using forget_atom = caf::atom_constant<caf::atom("forget")>;
using kept_atom = caf::atom_constant<caf::atom("kept")>;
using freed_atom = caf::atom_constant<caf::atom("freed")>;
using transfers_atom = caf::atom_constant<caf::atom("transfers")>;
using replicate_atom = caf::atom_constant<caf::atom("replicate")>;
using replica_atom = caf::atom_constant<caf::atom("replica")>;
using replicated_atom = caf::atom_constant<caf::atom("replicated")>;
using hand_over_atom = caf::atom_constant<caf::atom("handover")>;
using handed_atom = caf::atom_constant<caf::atom("handed")>;
using share_atom = caf::atom_constant<caf::atom("share")>;
using unmapped_atom = caf::atom_constant<caf::atom("unmapped")>;

} // namespace swarm::actors
