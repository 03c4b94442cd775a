#pragma once

#include <caf/fwd.hpp>

#include <map>
#include <string>
#include <vector>

#include "actors/table_row.hpp"

namespace swarm::actors {

/// What one control-store shard starts with.
struct gcs_shard_config {
  /// Shard index and count; keys belong to the shard their hash selects.
  size_t index = 0;
  size_t count = 1;
  /// The function table: name -> signature.
  std::map<std::string, std::string> functions;
};

/// Spawns one shard of the global control store. It holds the function table, the
/// actor table with named-actor lookup, and the node, job and object tables:
///   (register_atom, name, actor_record_ptr) -> bool    false when the name is taken
///   (lookup_atom, name) -> actor_record_ptr            error when unknown
///   (forget_atom, name)                                drops a name (actor killed)
///   (lookup_atom, "function", name) -> signature       error when unknown
///   (put_atom, table, key, table_row)                  writes a row
///   (erase_atom, table, key)                           removes a row
///   (get_atom, table, key) -> table_row                error when absent
///   (scan_atom, table) -> std::vector<table_row>       this shard's rows of `table`
///   (stats_atom) -> (functions, actors, rows)
/// A node runs `runtime_config::gcs_shards` of them (a cluster's head: the file's
/// `gcs_shards`); keys are routed by `shard_of`. Replication comes with fault tolerance.
caf::actor spawn_gcs_shard(caf::actor_system& sys, gcs_shard_config cfg);

/// The shard that owns `key` among `count` shards.
size_t shard_of(const std::string& key, size_t count);

/// The key a row of `table` is sharded by.
inline std::string table_key(const std::string& table, const std::string& key) {
  return table + "/" + key;
}

} // namespace swarm::actors
