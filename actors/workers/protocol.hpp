#pragma once

// The worker subsystem's verbs: the atoms of the messages its actors answer to.

#include <caf/atom.hpp>

namespace swarm::actors {

/// (dev_alloc_atom, uint64_t bytes, caf::timespan wait) -> device_grant
using dev_alloc_atom = caf::atom_constant<caf::atom("devalloc")>;
/// (dev_free_atom, uint64_t address, uint64_t epoch): a buffer's last holder let it go.
using dev_free_atom = caf::atom_constant<caf::atom("devfree")>;
/// (dev_fail_atom, std::string why): a kernel faulted; the worker exits to be restarted
/// on a fresh context, which CUDA cannot give while this process runs: the device is
/// then lost to it (`device_board::lost`), and the node's process must be replaced.
using dev_fail_atom = caf::atom_constant<caf::atom("devfail")>;
/// (dev_unmap_atom, unmap_request): memory another process shared, mapped here, was let
/// go: unmapped once the work queued on the device's streams before is done.
using dev_unmap_atom = caf::atom_constant<caf::atom("devunmap")>;
/// (dev_stats_atom) -> (uint64_t used, uint64_t cached, uint64_t capacity, uint64_t
/// waiting)
using dev_stats_atom = caf::atom_constant<caf::atom("devstats")>;

} // namespace swarm::actors
