#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "actors/objects/cached_copy.hpp"
#include "actors/objects/spill_files.hpp"
#include "base/human_bytes.hpp"
#include "base/result.hpp"
#include "framework/detail/object_slot.hpp"
#include "framework/detail/value_pool.hpp"
#include "framework/object_id.hpp"

namespace swarm::actors {

/// What the object store holds right now.
struct store_stats {
  size_t objects = 0;
  size_t bytes = 0;           ///< primaries and secondary copies
  size_t secondary_bytes = 0; ///< copies pulled from other nodes, and pulls in flight
  size_t capacity = 0;
  size_t inline_threshold = 0;
  size_t rejected = 0;
  /// Memory of freed large values kept to take new ones (see `detail::value_pool`),
  /// outside `bytes`; given up whenever an object needs the room.
  size_t pooled_bytes = 0;
  size_t pool_reuses = 0; ///< new values copied into kept memory, since the start
  size_t spilled_objects = 0; ///< objects on disk only now
  size_t spilled_bytes = 0;   ///< bytes of spill files now
  size_t spills = 0;          ///< objects moved from memory to disk, since the start
  size_t restores = 0;       ///< objects read back from disk into memory, since the start
  size_t cached_objects = 0; ///< secondary copies kept after their readers let go
  size_t cached_bytes = 0;   ///< their bytes (part of `secondary_bytes`)
  size_t cache_hits = 0;   ///< reads of other nodes' objects found here, since the start
  size_t cache_misses = 0; ///< reads of other nodes' objects that pulled them
  size_t evictions = 0;    ///< cached copies dropped to make room, since the start
};

/// The data plane of a node's object store: accounts the bytes of every stored object
/// against the capacity. Values themselves are shared immutably with their owners' slots,
/// so a read on the node never copies. When an object does not fit and the store spills,
/// objects in memory that nobody reads now go to disk first, the largest and least
/// recently used first, and come back when read (room made the same way). Before
/// anything spills, cached copies of other nodes' objects nobody reads now are evicted,
/// weighed the same way. Thread-safe; leases keep it alive.
class store_table final : public std::enable_shared_from_this<store_table> {
public:
  /// Keeps up to `pool_bytes` of freed large values' memory for new ones; spills as
  /// `spill` says (none: objects that do not fit are refused).
  store_table(size_t capacity, size_t inline_threshold, size_t pool_bytes = 0,
              std::optional<spill_config> spill = std::nullopt);

  /// Where large values put here get their memory and give it back.
  detail::value_pool& pool() { return *pool_; }

  /// Admits a value: no lease for values under the inline threshold, `store_full` when
  /// it does not fit even after spilling what can be.
  result<std::unique_ptr<detail::store_lease>> admit(const object_id& id,
                                                     const detail::boxed_value& value);

  /// Counts the `bytes` of a secondary copy of `id` (a value pulled from another node,
  /// from the start of its pull) against the capacity while the lease lives, spilling
  /// primaries for them; `store_full` when they do not fit.
  result<std::unique_ptr<detail::store_lease>> admit_secondary(const object_id& id,
                                                               size_t bytes);

  /// Registers a cached copy, evicted when an object needs the room.
  void cache(std::weak_ptr<cached_copy> copy);

  /// Counts a read of another node's object: found here (`hit`) or pulled.
  void count_lookup(bool hit) noexcept;

  store_stats stats() const;

  /// An object stored here, for listings.
  struct stored_object {
    object_id id;
    size_t bytes = 0;
    bool spilled = false; ///< on disk only now
  };

  /// The objects stored here (not pulled copies).
  std::vector<stored_object> objects() const;

  /// Whether `id` is stored.
  bool contains(const object_id& id) const;

private:
  friend class table_lease;
  friend class secondary_lease;

  struct entry {
    size_t bytes = 0;
    std::weak_ptr<detail::object_slot> slot;
    bool in_memory = true;
    bool on_disk = false; // a spill file holds it (also once it came back)
    size_t leases = 1;    // copies of it made here (a task retried here), counted once
  };
  // What spilling freed, and why it stopped short, if it did.
  struct spilled {
    size_t bytes = 0;
    std::optional<error> failure;
  };

  void bind(const object_id& id, std::weak_ptr<detail::object_slot> slot);
  result<detail::restored_value> restore(const object_id& id,
                                         const detail::type_descriptor& type);
  // Spills objects until `bytes` more fit in memory, or nothing more can go.
  spilled spill_for(size_t bytes);
  // Evicts cached copies until `bytes` more fit in memory; the bytes it freed.
  size_t evict_for(size_t bytes);
  // What `fit` counts: a new object, a pulled copy, or a spilled object read back.
  enum class fit_mode { primary, secondary, restore };
  // Counts `bytes` of `id` (`what`, for errors) in memory once they fit, spilling for
  // them; the error says why they do not.
  result<void> fit(const object_id& id, size_t bytes, const std::string& what,
                   fit_mode mode);
  void release(const object_id& id);
  void release_secondary(size_t bytes);
  // Sheds pooled memory until `bytes` more fit beside it (or nothing is pooled).
  void make_room(size_t bytes);
  // Why `bytes` more of `what` do not fit; call under the mutex.
  error full_error(const std::string& what, size_t bytes,
                   const std::optional<error>& spill_failure = std::nullopt);

  // Guards the accounting: admits run on the putting thread (user, worker, I/O) and
  // releases in lease destructors on any thread, neither waiting for an actor.
  mutable std::mutex mtx_;
  std::unordered_map<object_id, entry> objects_;
  size_t spilled_objects_ = 0;
  size_t spills_ = 0;
  size_t restores_ = 0;
  std::unique_ptr<spill_files> files_; // null: no spilling
  std::vector<std::weak_ptr<cached_copy>> cached_;
  size_t prune_cached_at_ = 64;
  size_t evictions_ = 0;
  std::atomic<size_t> hits_{0};
  std::atomic<size_t> misses_{0};
  size_t bytes_ = 0;
  size_t secondary_bytes_ = 0;
  size_t rejected_ = 0;
  const size_t capacity_;
  const size_t inline_threshold_;
  std::shared_ptr<detail::value_pool> pool_;
};

} // namespace swarm::actors
