#pragma once

#include <caf/actor.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "framework/resources.hpp"

namespace swarm::actors {

/// Workers the local scheduler lent out while idle, each still holding the resources of
/// its last task. A submitter whose task has the same demand takes one and hands it the
/// task directly, skipping the scheduler (one thread hand-off instead of two); the worker
/// lends itself again when done. The scheduler takes lent workers back when it needs
/// them. Owned by the node; thread-safe.
class idle_workers {
public:
  struct entry {
    size_t index;
    caf::actor handle;
    resource_set lease;
    /// The scheduler incarnation that owns the worker.
    uint64_t generation;
  };

  /// Lends a worker; false once closed or when the worker belongs to a scheduler that was
  /// replaced (its workers are on their way out).
  bool lend(entry e);

  /// Takes a worker leased for exactly `demand`, if one is lent.
  std::optional<entry> take_for(const resource_set& demand);

  /// Takes worker `index` back; false when it is not lent (busy with a direct task).
  bool take_back(size_t index);

  /// Set by the scheduler while it has queued tasks and wants busy lent workers to report
  /// back when they finish.
  void want(bool yes) { wanted_.store(yes, std::memory_order_relaxed); }
  bool wanted() const { return wanted_.load(std::memory_order_relaxed); }

  /// Drops every entry and starts a new generation (a new scheduler starts from scratch);
  /// returns the generation.
  uint64_t renew();

  /// Drops every entry and refuses further ones.
  void close();

private:
  std::mutex mtx_;
  std::vector<entry> entries_;
  bool closed_ = false;
  uint64_t generation_ = 0;
  std::atomic<bool> wanted_{false};
};

} // namespace swarm::actors
