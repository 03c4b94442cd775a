#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "framework/detail/type_descriptor.hpp"
#include "base/error.hpp"
#include "framework/object_id.hpp"
#include "base/result.hpp"

namespace swarm::detail {

struct task_spec;

/// Accounts one object's bytes in a node's object store; releases them when destroyed.
class store_lease {
public:
  virtual ~store_lease();
};

/// Told when a thread that runs tasks is about to block on an object and when it resumes,
/// so the node can lend the thread's resources to other work meanwhile.
class blocking_hook {
public:
  virtual ~blocking_hook();
  virtual void on_block() = 0;
  virtual void on_unblock() = 0;
};

/// Installs the hook for the calling thread (nullptr removes it).
void set_thread_blocking_hook(blocking_hook* hook);

/// The owner's record of one object: its id, and once produced its value or error.
/// Thread-safe; the value never changes once published.
class object_slot {
public:
  enum class state : uint8_t { pending, ready, failed, freed };

  using clock = std::chrono::steady_clock;

  explicit object_slot(object_id id);

  /// Makes waiters yield a while before sleeping: for objects made on dedicated worker
  /// threads. Set before the slot is shared.
  void spin_before_sleeping() noexcept { spin_ = true; }
  ~object_slot();

  object_slot(const object_slot&) = delete;
  object_slot& operator=(const object_slot&) = delete;

  const object_id& id() const noexcept { return id_; }

  state current() const noexcept { return state_.load(std::memory_order_acquire); }

  /// Whether the slot holds a value, an error, or was freed.
  bool done() const noexcept { return current() != state::pending; }

  /// Publishes the value; returns false when the slot was already done (e.g. cancelled).
  bool set_value(boxed_value v, std::unique_ptr<store_lease> lease = nullptr);

  /// Publishes an error; returns false when the slot was already done.
  bool set_error(error e);

  /// Drops the value and its store bytes; later reads fail with `object_freed`.
  void free();

  /// Blocks until done or `deadline`; returns whether done.
  bool wait_until(clock::time_point deadline) const;

  /// The value or the error; `timeout` when not done yet.
  result<boxed_value> read() const;

  /// Runs `f` once the slot is done: at once on this thread when it already is, otherwise
  /// on the thread that completes it. `f` must not block.
  void when_done(std::function<void()> f);

  /// The task producing this object, while it may still run (for cancellation).
  void set_producer(std::weak_ptr<task_spec> task);
  std::shared_ptr<task_spec> producer() const;

  /// Where the primary copy of the value lives when it stayed on the node that made it
  /// (a node name and the encoded size); the owner's node sets and clears it.
  struct location {
    std::string node;
    uint64_t size = 0;
  };
  void set_location(std::optional<location> where);
  std::optional<location> primary_copy() const;

private:
  bool complete(state s, boxed_value v, error e, std::unique_ptr<store_lease> lease);

  const object_id id_;
  std::atomic<state> state_{state::pending};
  mutable std::mutex mtx_;
  mutable std::condition_variable cv_;
  boxed_value value_;
  error error_;
  std::unique_ptr<store_lease> lease_;
  std::vector<std::function<void()>> callbacks_;
  std::weak_ptr<task_spec> producer_;
  std::optional<location> location_;
  bool spin_ = false;
};

using slot_ptr = std::shared_ptr<object_slot>;

/// Blocks until at least `k` of `slots` are done or `deadline` passes; returns which are
/// done.
std::vector<bool> wait_for_slots(const std::vector<object_slot*>& slots, size_t k,
                                 object_slot::clock::time_point deadline);

} // namespace swarm::detail
