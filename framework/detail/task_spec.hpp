#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "framework/detail/object_slot.hpp"
#include "framework/detail/stream_channel.hpp"
#include "framework/options.hpp"

namespace swarm {
class context;
} // namespace swarm

namespace swarm::detail {

/// Calls user code: `self` is the actor object for methods, nullptr for tasks; `args`
/// point at the argument values, one per parameter.
using invoker =
    std::function<boxed_value(void* self, context& ctx, const void* const* args)>;

/// One argument of a call: a value, or a future whose value is passed once it exists.
struct task_arg {
  boxed_value value;
  slot_ptr ref;
};

/// The phases of a task in the `claim` word; the rest of the word is a dispatch epoch.
enum class task_phase : uint64_t { queued = 0, running = 1, finished = 2, cancelled = 3 };

/// Packs an epoch and a phase into a claim word.
constexpr uint64_t make_claim(uint64_t epoch, task_phase p) {
  return (epoch << 2) | static_cast<uint64_t>(p);
}

/// The wall clock in microseconds since the epoch, as the timeline records it.
inline int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// The state an actor saved with a call's effect, and its number, for a call from the
/// actor's owner on another node: it travels in the call's result, so the owner never
/// counts the answer without the state a restart would resume from.
struct carried_state {
  uint64_t seq = 0; // 0: none saved
  std::vector<uint8_t> bytes;
};

/// A submitted call: what to run, with what, and where its result goes.
struct task_spec {
  std::string name;
  const invoker* fn = nullptr;
  invoker own_fn; // for actor methods and continuations; `fn` then points here
  bool actor_call = false;
  std::vector<const type_descriptor*> params;
  /// The result's type, to decode a result that comes from another node.
  const type_descriptor* result_type = nullptr;
  /// For calls to an actor on another node: the method's registered name.
  std::string method;
  std::vector<task_arg> args;
  task_options options;
  slot_ptr result;
  uint64_t owner = 0;
  /// The node that asked for it, when another: its result and output go there.
  std::string origin;
  uint32_t attempts = 0;
  /// The nodes its owner lost it on: a run again is placed elsewhere when it can be.
  std::vector<std::string> lost_on;
  /// For the timeline: when this node's scheduler queued it, and when its last attempt
  /// started and ended (wall clock, microseconds since the epoch; 0: not yet).
  int64_t queued_us = 0;
  int64_t started_us = 0;
  int64_t ended_us = 0;
  /// Epoch and phase; whoever moves it from `queued` gets to run or cancel the task.
  std::atomic<uint64_t> claim{make_claim(0, task_phase::queued)};
  /// Cancelled while it ran: user code sees it (`context::cancelled`) and its result is a
  /// `cancelled` error whatever it returns.
  std::atomic<bool> cancel_requested{false};
  /// It returned a future: its result is set when that future is done, after it ran.
  bool forwarded = false;
  /// A streaming task or call: where its code writes its items on the node running it,
  /// and, on its caller's node, the channel its reader takes them from.
  std::shared_ptr<stream_sink> stream;
  std::shared_ptr<stream_channel> reader;
  /// A call from another node to an actor hosted here: filled by the host before the
  /// result is set, when the caller is the actor's owner (see `carried_state`).
  std::shared_ptr<carried_state> state_for_owner;

  task_spec() = default;
  task_spec(const task_spec&) = delete;
  task_spec& operator=(const task_spec&) = delete;

  /// A task dropped unrun (a message lost with an actor that died, say) fails its future
  /// instead of leaving its owner waiting forever.
  ~task_spec() {
    if (result && !result->done() && !forwarded)
      result->set_error({actor_call ? errc::actor_died : errc::worker_died,
                         "'" + name +
                             "' was dropped before it ran: the actor or worker "
                             "holding it went away"});
  }

  /// Moves a queued task into `to` for the dispatch of `epoch`; false if someone else
  /// won.
  bool try_claim(uint64_t epoch, task_phase to) {
    auto expected = make_claim(epoch, task_phase::queued);
    return claim.compare_exchange_strong(expected, make_claim(epoch, to));
  }

  /// Moves a queued task to a new dispatch epoch, so a stale dispatch of it is skipped;
  /// false when it already runs or ended.
  bool requeue() { return move_queued(true); }

  /// Cancels a queued task for good; false when it already runs or ended.
  bool cancel_queued() { return move_queued(false); }

  /// Cancels the task: one that has not started fails with `cancelled` now; one that
  /// runs is asked to stop (`cancel_requested`). False when it finished, or is an actor
  /// call that runs (its effect on the actor's state stands).
  bool cancel() {
    if (cancel_queued()) {
      result->set_error(
          {errc::cancelled, "task '" + name + "' was cancelled before it started"});
      return true;
    }
    if (actor_call || phase() != task_phase::running) return false;
    cancel_requested = true;
    return true;
  }

  uint64_t epoch() const { return claim.load() >> 2; }
  task_phase phase() const { return static_cast<task_phase>(claim.load() & 3); }

private:
  bool move_queued(bool next_epoch);
};

using task_ptr = std::shared_ptr<task_spec>;

inline bool task_spec::move_queued(bool next_epoch) {
  auto c = claim.load();
  while ((c & 3) == static_cast<uint64_t>(task_phase::queued)) {
    auto to = next_epoch ? make_claim((c >> 2) + 1, task_phase::queued)
                         : make_claim(c >> 2, task_phase::cancelled);
    if (claim.compare_exchange_weak(c, to)) return true;
  }
  return false;
}

} // namespace swarm::detail
