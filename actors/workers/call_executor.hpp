#pragma once

#include "framework/context.hpp"
#include "framework/detail/task_spec.hpp"

namespace swarm::actors {

/// How running a call went.
struct call_outcome {
  enum class kind { value, error, crash } what = kind::value;
  detail::boxed_value value;
  error err;
};

/// Runs `task` on this thread: resolves its arguments (all ready by now), checks their
/// types and calls user code, with `self` the actor object for methods. Exceptions from
/// user code become errors; an `actor_failure` becomes a crash.
call_outcome execute_call(detail::task_spec& task, void* self, context& ctx);

/// Before a call given GPUs runs: its first device is current on this thread.
void begin_on_devices(detail::core& node, const context& ctx);

/// Waits for the work the call queued on its devices (`ctx.gpu_ids()`): its result is
/// ready only then. A device that failed fails the call with `device_failed` (its
/// worker restarts).

void finish_on_devices(detail::core& node, const context& ctx, call_outcome& outcome);

/// Publishes the outcome in the task's result slot, admitting large values to the store.
void publish(detail::core& node, detail::task_spec& task, call_outcome outcome);

} // namespace swarm::actors
