#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <vector>

#include "framework/detail/actor_record.hpp"

namespace swarm::actors {

/// The actors this node hosts for other nodes, by the id those know them by: those made
/// for another node, registered by name, or whose handle was sent in a value. Hosting
/// keeps an actor alive until it is killed. Writers take turns; any thread reads without
/// waiting (an incoming call's hot path). Sharded, so a write copies one shard of the
/// table, not all of it.
class hosted_table {
public:
  hosted_table();

  /// The actor hosted as `id`; null when none is.
  detail::actor_record_ptr find(uint64_t id) const;

  /// The id `rec` is hosted as, if it is.
  std::optional<uint64_t> id_of(const detail::actor_record* rec) const;

  /// The id `rec` is hosted as; hosted as `fresh()` when it is not yet.
  uint64_t share(const detail::actor_record_ptr& rec,
                 const std::function<uint64_t()>& fresh);

  void put(uint64_t id, detail::actor_record_ptr rec);
  detail::actor_record_ptr erase(uint64_t id);
  void erase(const detail::actor_record* rec);
  /// Takes out the actors `pred` selects, whose owners restarted them elsewhere; returns
  /// them. Their ids are remembered (the latest `moved_kept`): a call that still comes
  /// is redirected.
  std::vector<detail::actor_record_ptr>
  move_out_if(const std::function<bool(const detail::actor_record&)>& pred);
  /// Whether the actor hosted as `id` was taken out by `move_out_if`.
  bool moved(uint64_t id) const;
  void clear();
  /// How many actors are hosted now.
  size_t size() const;
  /// Every actor hosted now.
  std::vector<detail::actor_record_ptr> all() const;

  static constexpr size_t moved_kept = 4096;

private:
  using shard = std::map<uint64_t, detail::actor_record_ptr>;
  static constexpr size_t shards = 64;
  std::shared_ptr<const shard> get(size_t i) const;
  void set(size_t i, shard s);
  void put_locked(uint64_t id, detail::actor_record_ptr rec);
  detail::actor_record_ptr erase_locked(uint64_t id);
  std::array<std::shared_ptr<const shard>, shards> shards_;
  // Writers take turns: the directory, and any thread that encodes a handle (share);
  // readers load the shards without it. ids_ and moved_ are read under it too.
  mutable std::mutex write_;
  std::map<const detail::actor_record*, uint64_t> ids_; // under `write_`
  std::set<uint64_t> moved_;                            // under `write_`
  std::deque<uint64_t> moved_order_;                    // under `write_`, oldest first
};

} // namespace swarm::actors
