#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>

#include "actors/objects/object_manager.hpp"
#include "framework/detail/object_slot.hpp"

namespace swarm::actors {

/// The objects owned by this node whose refs were written into values, by id, while
/// they live: a ref read back here, or another node's borrow, finds the object. Written
/// by whatever thread encodes a value, read by the reader's; the map is all it guards.
class lent_refs {
public:
  /// Remembers `slot` (weakly: it does not keep the object).
  void add(const detail::slot_ptr& slot);

  /// The object `k` while it lives; null after.
  detail::slot_ptr find(const object_key& k) const;

  /// Objects remembered (some perhaps gone, until the next sweep).
  size_t size() const;

private:
  // Guards slots_: encoders add and readers find on their own threads, with no hop.
  mutable std::mutex mtx_;
  std::map<object_key, std::weak_ptr<detail::object_slot>> slots_;
  // Entries of objects gone are swept when the map doubles past this.
  size_t sweep_at_ = 64;
};

} // namespace swarm::actors
