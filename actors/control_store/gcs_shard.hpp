#pragma once

#include <caf/fwd.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/common/wall_clock.hpp"
#include "actors/control_store/gcs_chain.hpp"
#include "actors/control_store/gcs_log.hpp"
#include "actors/control_store/table_row.hpp"
#include "base/node_log.hpp"
#include "base/result.hpp"

namespace swarm::actors {

/// What one control-store shard starts with.
struct gcs_shard_config {
  /// Shard index and count; keys belong to the shard their hash selects.
  size_t index = 0;
  size_t count = 1;
  /// The function table: name -> signature.
  std::map<std::string, std::string> functions;
  /// Where the row tables persist (`gcs_log`, in `<dir>/shard-<index>/`); empty: in
  /// memory only.
  std::string dir;
  /// How the log behaves when `dir` is set.
  gcs_log_options log;
  /// The node's log.
  node_log logger;
  /// How this shard reaches the other members of its chain (one link per node).
  std::shared_ptr<gcs_chain_link> link = std::make_shared<gcs_chain_link>();
  /// The shard number its chain messages carry (`gcs_shards` numbers the key-value
  /// table's own shards after the others); `index` when not set.
  std::optional<size_t> chain_id;
  /// Milliseconds since the Unix epoch, where a chain's configuration epochs start (a
  /// simulation gives its virtual clock, so that a seed replays the same run).
  std::function<uint64_t()> wall_clock = wall_ms;
};

/// Spawns one shard of the global control store. It holds the function table, the
/// actor table with named-actor lookup, and the node, job and object tables:
///   (register_atom, name, actor_record_ptr) -> bool    false when the name is taken
///   (lookup_atom, name) -> actor_record_ptr            error when unknown
///   (forget_atom, name)                                drops a name (actor killed)
///   (lookup_atom, "function", name) -> signature       error when unknown
///   (put_atom, table, key, table_row) -> void          writes a row
///   (erase_atom, table, key) -> void                   removes a row
///   (get_atom, table, key) -> table_row                error when absent
///   (scan_atom, table) -> std::vector<table_row>       this shard's rows of `table`
///   (scan_atom, table, key) -> std::vector<table_row>  the row, or none
///   (stats_atom) -> (functions, actors, rows)
///   (chain_atom, members)                              this shard heads a new chain
///   (chain_atom, members, placed, joined)              a key-value shard's chain changed
///                                                      at placement version `placed`
///                                                      (heads it, steps down, or takes
///                                                      no write of an older one); this
///                                                      node a member since `joined` (0:
///                                                      of a chain new then)
///   (chain_atom, wire_msg::gcs_chain)                  a message from another member
///   (stats_atom, chain_atom) -> (members, pending writes, member epoch, member seq)
/// A node runs `runtime_config::gcs_shards` of them (every node of a cluster: the file's
/// `gcs_shards`); keys are routed by `shard_of`.
///
/// Chain replication: the head's shard i heads the chain of shard i, whose members are
/// shard i of other nodes (`members`, this node first; the link carries the messages).
/// A put or erase goes down the chain and is answered, and applied to what reads see,
/// once the tail acknowledges it: reads at the head see exactly what the tail has, as
/// reads at the tail would. A new chain gets the whole shard first (a sync), then the
/// writes still unacknowledged. A member that misses a sync asks for one (resync).
///
/// Any member may become the head (a chain whose first member is this node): it first
/// recovers, asking the other members one at a time for their copies, and keeps the
/// newest (its own when it was a member already; a shard that started with nothing
/// merges them under what it wrote meanwhile). A head told of a chain another node heads
/// steps down: the writes it had not committed fail (their writers ask the new head),
/// and it keeps its rows as a member's copy until the new head's sync.
///
/// With `cfg.dir` set, the row tables (node, job, object) are replayed from disk here,
/// before the shard exists, and every put and erase is on disk before it applies; a
/// write the disk refuses is not applied, is logged, and its reply is the error. The
/// function table comes from the application and named actors are live pointers: those
/// are never persisted. An error when the store cannot be opened (it names the file).
result<caf::actor> spawn_gcs_shard(caf::actor_system& sys, gcs_shard_config cfg);

/// The shard that owns `key` among `count` shards.
size_t shard_of(const std::string& key, size_t count);

/// The key a row of `table` is sharded by.
inline std::string table_key(const std::string& table, const std::string& key) {
  return table + "/" + key;
}

} // namespace swarm::actors
