#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "framework/detail/object_slot.hpp"
#include "framework/options.hpp"

namespace swarm {
class context;
} // namespace swarm

namespace swarm::detail {

/// Calls user code: `self` is the actor object for methods, nullptr for tasks; `args`
/// point at the argument values, one per parameter.
using invoker = std::function<boxed_value(void* self, context& ctx, const void* const* args)>;

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

/// A submitted call: what to run, with what, and where its result goes.
struct task_spec {
  std::string name;
  const invoker* fn = nullptr;
  invoker own_fn;  // for actor methods; `fn` then points here
  std::vector<const type_descriptor*> params;
  std::vector<task_arg> args;
  task_options options;
  slot_ptr result;
  uint64_t owner = 0;
  uint32_t attempts = 0;
  /// Epoch and phase; whoever moves it from `queued` gets to run or cancel the task.
  std::atomic<uint64_t> claim{make_claim(0, task_phase::queued)};

  /// Moves a queued task into `to` for the dispatch of `epoch`; false if someone else won.
  bool try_claim(uint64_t epoch, task_phase to) {
    auto expected = make_claim(epoch, task_phase::queued);
    return claim.compare_exchange_strong(expected, make_claim(epoch, to));
  }

  uint64_t epoch() const { return claim.load() >> 2; }
  task_phase phase() const { return static_cast<task_phase>(claim.load() & 3); }
};

using task_ptr = std::shared_ptr<task_spec>;

} // namespace swarm::detail
