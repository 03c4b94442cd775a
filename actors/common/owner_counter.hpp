#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "actors/common/wall_clock.hpp"

namespace swarm::actors {

/// Owner ids carry their node's index + 1 from this bit up, so ids are unique
/// cluster-wide and name the node of their owner.
constexpr int owner_index_shift = 40;
constexpr uint64_t owner_counter_mask = (uint64_t{1} << owner_index_shift) - 1;

/// Counts the owner ids one life of a node makes (the bits below its index): from where
/// the life's start time puts it (about one step a microsecond since the epoch, wrapping
/// after 12 days), so a life never makes the ids an earlier life of its node made, and
/// what that life owned (objects, calls kept in saved states) is never taken for its own.
class owner_counter {
public:
  explicit owner_counter(uint64_t life_ms = wall_ms())
      : first_(std::max<uint64_t>((life_ms << 10) & owner_counter_mask, 1)),
        next_(first_) {}

  /// The next counter; never 0.
  uint64_t next() {
    uint64_t counter = 0;
    while (counter == 0) // past the wrap
      counter = next_.fetch_add(1, std::memory_order_relaxed) & owner_counter_mask;
    return counter;
  }

  /// Whether this life made `counter` (the bits below an owner id's index).
  bool made(uint64_t counter) const {
    return ((counter - first_) & owner_counter_mask) <
           next_.load(std::memory_order_relaxed) - first_;
  }

private:
  uint64_t first_;
  std::atomic<uint64_t> next_;
};

} // namespace swarm::actors
