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
class object_slot;

/// A value read back from disk by the store that spilled it.
struct restored_value {
  boxed_value value;
  /// Whether the store made room for it in memory (else the reader gets it, the slot
  /// does not keep it, and it stays on disk).
  bool kept = false;
};

/// Accounts one object's bytes in a node's object store; releases them when destroyed.
/// A store that spills learns the object's slot, and reads the value back for it.
class store_lease {
public:
  virtual ~store_lease();

  /// The slot that holds the value now; called with the slot's lock held.
  virtual void bind(std::weak_ptr<object_slot> slot);

  /// Reads back a value this store spilled (as a `type`).
  virtual result<restored_value> restore(const type_descriptor& type);
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

/// While it lives, the task thread that made it counts as blocked (its hook told), as
/// in `get`: its resources are lent to other work.
class blocked_section {
public:
  blocked_section();
  ~blocked_section();
  blocked_section(const blocked_section&) = delete;
  blocked_section& operator=(const blocked_section&) = delete;

private:
  blocking_hook* hook_;
};

/// The owner's record of one object: its id, and once produced its value or error.
/// Thread-safe; the value never changes once published.
class object_slot : public std::enable_shared_from_this<object_slot> {
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

  /// For the store: hands the value to `write` (which puts it on disk) and drops it
  /// from memory, when the slot holds a value nobody else holds now and no other thread
  /// is in the slot. Returns whether it did; `write`'s error, if it failed.
  result<bool> spill(const std::function<result<void>(const boxed_value&)>& write);

  /// Whether the value lives on disk now (it comes back when read).
  bool spilled() const;

  /// When the value was last read or made, for the store's choice of what to spill.
  clock::time_point last_use() const noexcept {
    return clock::time_point{clock::duration{last_use_.load(std::memory_order_relaxed)}};
  }

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
    /// Other nodes keeping whole copies (replicas).
    std::vector<std::string> replicas = {};
  };
  void set_location(std::optional<location> where);
  std::optional<location> primary_copy() const;

private:
  bool complete(state s, boxed_value v, error e, std::unique_ptr<store_lease> lease);
  // Reads the spilled value back through the lease; call with the lock held.
  result<boxed_value> restore() const;

  const object_id id_;
  std::atomic<state> state_{state::pending};
  // Guards the value, lease and callbacks (with cv_): user threads block and read in
  // place; workers, I/O threads and actors complete it; the store spills it.
  mutable std::mutex mtx_;
  mutable std::condition_variable cv_;
  mutable boxed_value value_; // read() brings a spilled value back
  error error_;
  std::unique_ptr<store_lease> lease_;
  std::vector<std::function<void()>> callbacks_;
  std::weak_ptr<task_spec> producer_;
  std::optional<location> location_;
  bool spin_ = false;
  // Spilled: value_.ptr is empty and value_.type says what comes back.
  mutable bool spilled_ = false;
  // Set only for values in the store (with a lease): small ones are never spilled.
  mutable std::atomic<clock::rep> last_use_{0};
};

using slot_ptr = std::shared_ptr<object_slot>;

/// Blocks until at least `k` of `slots` are done or `deadline` passes; returns which are
/// done.
std::vector<bool> wait_for_slots(const std::vector<object_slot*>& slots, size_t k,
                                 object_slot::clock::time_point deadline);

} // namespace swarm::detail
