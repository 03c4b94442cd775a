#pragma once

#include <caf/logger.hpp>

namespace swarm::actors {

/// Leaves a thread CAF does not own (an endpoint's I/O thread, a user's thread) as it
/// found it. CAF 0.17 keeps a thread-local reference to the actor system's logger on
/// each thread that spawns an actor or makes a `scoped_actor`, and `~actor_system` waits
/// until every such reference is gone: a thread that outlives the system while holding
/// one hangs its shutdown for good. Put one around work that may spawn.
class foreign_thread_guard {
public:
  foreign_thread_guard() noexcept
      : had_logger_(caf::logger::current_logger() != nullptr) {}

  ~foreign_thread_guard() {
    if (!had_logger_ && caf::logger::current_logger() != nullptr)
      caf::logger::set_current_actor_system(nullptr);
  }

  foreign_thread_guard(const foreign_thread_guard&) = delete;
  foreign_thread_guard& operator=(const foreign_thread_guard&) = delete;

private:
  bool had_logger_;
};

} // namespace swarm::actors
