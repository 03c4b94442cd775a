#pragma once

// The values a node pulled from other nodes, for its own readers: each one found again
// while a reader holds it, and the most recently read kept after their readers let go
// (secondary copies, within a byte budget; the store may evict them meanwhile).

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <utility>

#include "actors/objects/cached_copy.hpp"
#include "actors/objects/protocol.hpp"
#include "framework/detail/type_descriptor.hpp"

namespace swarm::actors {

/// A copy found here: the value and its type; `value` null when there is none.
struct pulled_copy {
  std::shared_ptr<const void> value;
  const detail::type_descriptor* type = nullptr;
};

/// The pulled values of one object manager.
class pulled_copies {
public:
  /// Each copy kept is also handed to `cache` (the store, which may evict it).
  pulled_copies(uint64_t budget, std::function<void(std::shared_ptr<cached_copy>)> cache)
      : budget_(budget), cache_(std::move(cache)) {}

  /// Whether a value of `bytes` may be kept at all.
  bool fits(uint64_t bytes) const { return bytes <= budget_; }

  /// Finds `v` again for readers of `k` while it lives. Swept of values gone when it
  /// doubled, so it is bounded by the values alive.
  void remember(const object_key& k, const std::shared_ptr<const void>& v,
                const detail::type_descriptor* type);

  /// Keeps `v` (`bytes` of it) after its readers let go, dropping the least recently
  /// read past the budget.
  void keep(const object_key& k, std::shared_ptr<const void> v,
            const detail::type_descriptor* type, uint64_t bytes);

  /// The value of `k` a reader still holds.
  pulled_copy remembered(const object_key& k) const;

  /// The copy of `k` kept, without marking it read; none when the store evicted it.
  pulled_copy kept(const object_key& k) const;

  /// The copy of `k` kept, as a `type`, marked as read now; null when none is.
  std::shared_ptr<const void> read_kept(const object_key& k,
                                        const detail::type_descriptor* type);

  /// Drops the least recently read copy kept (found again while a reader holds it);
  /// false when none is kept.
  bool drop_least_recent();

  /// Drops the copy of `k` kept, if any.
  void drop_kept(const object_key& k);

  /// Forgets `k` altogether: its owner freed it.
  void forget(const object_key& k) {
    drop_kept(k);
    fetched_.erase(k);
  }

  size_t remembered_count() const { return fetched_.size(); }
  uint64_t kept_bytes() const { return kept_bytes_; }

private:
  struct kept_copy {
    std::shared_ptr<cached_copy> value;
    const detail::type_descriptor* type;
    uint64_t bytes;
  };
  using kept_list = std::list<std::pair<object_key, kept_copy>>;

  uint64_t budget_;
  std::function<void(std::shared_ptr<cached_copy>)> cache_;
  std::map<object_key,
           std::pair<std::weak_ptr<const void>, const detail::type_descriptor*>>
      fetched_;
  size_t prune_fetched_at_ = 64;
  kept_list kept_; // most recently read first
  std::map<object_key, kept_list::iterator> kept_index_;
  uint64_t kept_bytes_ = 0;
};

} // namespace swarm::actors
