#pragma once

#include <mutex>
#include <vector>

#include "framework/detail/task_spec.hpp"

namespace swarm::actors {

/// Tasks submitted to a node and not yet taken by its local scheduler. The node owns it,
/// so tasks survive a scheduler restart: the successor takes them over. Submitters wake
/// the scheduler only when it is not already due to drain, so a burst of submissions
/// costs one message. Thread-safe.
class task_inbox {
public:
  /// Adds a task; returns true when the scheduler must be woken to drain. False also
  /// when the inbox is closed (the task was not added).
  bool push(detail::task_ptr t, bool& accepted);

  /// Takes every task and clears the wake-up flag.
  std::vector<detail::task_ptr> drain();

  /// Whether tasks wait.
  bool empty() const;

  /// Refuses further tasks and returns those left.
  std::vector<detail::task_ptr> close();

  bool closed() const;

private:
  // Submitters (user, worker and I/O threads) push without a hop; the scheduler drains.
  // The node owns it so that tasks outlive a scheduler restart.
  mutable std::mutex mtx_;
  std::vector<detail::task_ptr> items_;
  bool wake_pending_ = false;
  bool closed_ = false;
};

} // namespace swarm::actors
