#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "actors/control_store/gcs_chain.hpp"
#include "actors/control_store/table_row.hpp"
#include "base/result.hpp"
#include "framework/detail/core.hpp"

namespace swarm::actors {

/// A node's handles on its control-store shards, as the node supervisor (re)starts them,
/// and the ways to reach them: rows of the node, job and object tables, the key-value
/// table, and chain replication. A shard being restarted has no handle: what goes to it
/// meanwhile is dropped (writes) or fails (reads).
///
/// With `spread_kv` (cluster.gcs_hosts > 1) the key-value table has `count` shards of its
/// own, numbered `count` to `2 count - 1` on the wire, which the head places on several
/// nodes, each with its own chain (`set_kv_placement`): a key-value request goes to the
/// node that heads its shard's chain.
class gcs_shards {
public:
  using kv_reply = result<std::optional<std::vector<uint8_t>>>;

  /// `sys` runs the one-shot actors that wait for answers; `count` shards.
  gcs_shards(caf::actor_system& sys, size_t count, bool spread_kv = false);

  /// Shards of each table (of the node, job and object tables; of the key-value table).
  size_t size() const { return count_; }
  /// The shard actors this node runs: `size()`, twice that with `spread_kv`.
  size_t local_count() const { return spread_kv_ ? 2 * count_ : count_; }
  /// Whether the key-value table is spread over several nodes (`spread_kv`).
  bool spread() const noexcept { return spread_kv_; }

  /// The shard owning `key`; null while it restarts.
  caf::actor for_key(const std::string& key) const;
  /// Shard `index` (re)started as `a`, or is gone (null). A restarted shard heads the
  /// chain its predecessor headed (and syncs it).
  void set(size_t index, caf::actor a);
  /// Forgets every handle (the node stops).
  void clear();

  /// How this node's shards reach other nodes' shards (chain replication).
  const std::shared_ptr<gcs_chain_link>& chain_link() const { return chain_link_; }
  /// Makes every shard here head of a chain of `members` (this node first).
  void set_chain(std::vector<std::string> members);
  /// Hands a chain message from another node to the shard it names; false when this
  /// node has no such shard.
  bool chain_message(wire_msg::gcs_chain m);

  /// Writes `row` under `key` in `table` (asynchronous: writes from one thread apply in
  /// order).
  void put(const std::string& table, const std::string& key, table_row row);
  /// Removes the row `key` of `table` (asynchronous, in order with puts).
  void erase(const std::string& table, const std::string& key);
  /// Every row of `table`, gathered from all shards.
  result<std::vector<table_row>> scan(const std::string& table);
  /// Registers `rec` under `name`; false when the name is taken.
  result<bool> register_name(const std::string& name, detail::actor_record_ptr rec);
  /// Reads, writes or erases `key` of the key-value table; `done` runs on an actor's
  /// thread once the shard answered (after the chain's tail acknowledged a put or
  /// erase), or after 10 s with a timeout.
  void kv_async(detail::kv_op op, const std::string& key, std::vector<uint8_t> value,
                std::function<void(kv_reply)> done);
  /// The same, waited for.
  kv_reply kv(detail::kv_op op, const std::string& key, std::vector<uint8_t> value);
  /// Sums the shards' counts of named actors and rows.
  void add_stats(size_t& named_actors, size_t& rows);

  /// Where the key-value table's shards are served, as the head placed them; each
  /// shard here whose chain changed is told it (with the version, and since when this
  /// node is a member), and the chain link keeps the placement. An older version is
  /// ignored.
  void set_kv_placement(const wire_msg::kv_placement& p);
  /// The version of the placement held (0: none yet).
  uint64_t kv_placement_version() const;
  /// The placement held.
  wire_msg::kv_placement kv_placement() const;
  /// The node serving `key` of the key-value table: empty while its shard is unplaced;
  /// no value while no placement came (ask the head: it serves the table with one host,
  /// and says when a spread table is not placed yet).
  std::optional<std::string> kv_node(const std::string& key) const;
  /// Waits, at most `timeout`, for a placement newer than `version`; whether one came.
  bool await_kv_placement(uint64_t version, std::chrono::milliseconds timeout);

private:
  // The first `n` shard actors (`size()` of them: those of the node, job and object
  // tables, names included).
  std::vector<caf::actor> first(size_t n) const;
  // The actor serving `key` of the key-value table here, or why none does.
  result<caf::actor> kv_shard(const std::string& key) const;

  caf::actor_system& sys_;
  size_t count_;
  bool spread_kv_;
  // Guards the handles, the chain and the placement: the supervisor sets handles as it
  // restarts shards, membership sets chains and placements, user threads read them on
  // every write (no hop); chain messages leave under it, in the order state changed, and
  // a key-value caller waits on placed_ for a newer placement.
  mutable std::mutex mtx_;
  std::condition_variable placed_;
  std::vector<caf::actor> shards_;
  std::vector<std::string> chain_;
  wire_msg::kv_placement kv_placement_;
  // Per key-value shard: the placement version at which this node joined its chain
  // (0: not a member, or a member of a chain new then).
  std::vector<uint64_t> kv_joined_;
  std::shared_ptr<gcs_chain_link> chain_link_ = std::make_shared<gcs_chain_link>();
};

/// The answer to key-value request `request_id` as it goes back to the node that asked.
wire_msg::kv_reply to_wire(uint64_t request_id, gcs_shards::kv_reply r);
/// ... and as the node that asked reads it.
gcs_shards::kv_reply from_wire(wire_msg::kv_reply r);

} // namespace swarm::actors
