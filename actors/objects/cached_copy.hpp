#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>

namespace swarm::actors {

/// A secondary copy of an object (pulled from another node) kept after its readers let
/// go. The object manager finds it for readers; the store table evicts it (drops it from
/// memory) when an object needs the room, before anything spills. Thread-safe.
class cached_copy {
public:
  using clock = std::chrono::steady_clock;

  cached_copy(std::shared_ptr<const void> value, size_t bytes)
      : value_(std::move(value)), bytes_(bytes), last_use_(clock::now()) {}

  /// The value, marked as used now; null once evicted.
  std::shared_ptr<const void> get() {
    std::lock_guard<std::mutex> guard{mtx_};
    last_use_ = clock::now();
    return value_;
  }

  /// The value without marking it used; null once evicted.
  std::shared_ptr<const void> peek() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return value_;
  }

  /// Drops the value when nobody else holds it, so that its memory (and the store bytes
  /// its lease counts) goes; whether it did. Call it holding no lock of the store's.
  bool evict() {
    std::shared_ptr<const void> dropped;
    {
      std::lock_guard<std::mutex> guard{mtx_};
      if (!value_ || value_.use_count() != 1) return false;
      dropped = std::move(value_);
    }
    return true; // `dropped` goes here, outside the lock
  }

  size_t bytes() const noexcept { return bytes_; }

  clock::time_point last_use() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return last_use_;
  }

private:
  // Guards value_ and last_use_: the object manager reads it; the store evicts it on
  // whichever thread admits an object that needs the room.
  mutable std::mutex mtx_;
  std::shared_ptr<const void> value_;
  const size_t bytes_;
  clock::time_point last_use_;
};

} // namespace swarm::actors
