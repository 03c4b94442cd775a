#pragma once

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
class gcs_shards {
public:
  using kv_reply = result<std::optional<std::vector<uint8_t>>>;

  /// `sys` runs the one-shot actors that wait for answers; `count` shards.
  gcs_shards(caf::actor_system& sys, size_t count);

  size_t size() const { return count_; }

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

private:
  std::vector<caf::actor> all() const;

  caf::actor_system& sys_;
  size_t count_;
  mutable std::mutex mtx_;
  std::vector<caf::actor> shards_;
  std::vector<std::string> chain_;
  std::shared_ptr<gcs_chain_link> chain_link_ = std::make_shared<gcs_chain_link>();
};

} // namespace swarm::actors
