#pragma once

#include <caf/fwd.hpp>

#include <memory>

namespace swarm::actors {

class store_table;

/// Spawns the object store's actor: the node-facing side of the store table, answering
///   (stats_atom) -> (objects, bytes, capacity, inline_threshold, rejected)
///   (lookup_atom, owner, seq) -> bool   whether that object is stored
/// Reads and writes on the node go to the table directly (zero copy); remote pulls,
/// spilling and eviction come to this actor as the store grows.
caf::actor spawn_object_store(caf::actor_system& sys, std::shared_ptr<store_table> table);

} // namespace swarm::actors
