#include "actors/workers/cpu_worker.hpp"

#include <caf/all.hpp>

#include "actors/workers/call_executor.hpp"
#include "actors/scheduling/protocol.hpp"
#include "actors/common/node_stopped.hpp"
#include "actors/common/topology.hpp"

namespace swarm::actors {

namespace {

// Tells the scheduler when the task on this worker's thread blocks on an object.
class worker_hook final : public detail::blocking_hook {
public:
  worker_hook(caf::actor_addr scheduler, size_t index)
      : scheduler_(std::move(scheduler)), index_(index) {}

  void on_block() override { notify(blocked_atom::value); }
  void on_unblock() override { notify(unblocked_atom::value); }

private:
  template <class Atom> void notify(Atom a) {
    if (auto s = caf::actor_cast<caf::actor>(scheduler_)) caf::anon_send(s, a, index_);
  }

  caf::actor_addr scheduler_;
  size_t index_;
};

struct worker_state {
  worker_state(detail::core& node, const worker_config& cfg)
      : ctx(node, node.new_owner_id()), hook(cfg.scheduler, cfg.index), config(cfg) {}

  context ctx;
  worker_hook hook;
  worker_config config;
  bool pinned = false;
};

void run(caf::stateful_actor<std::unique_ptr<worker_state>>* self, dispatch& d) {
  auto& st = *self->state;
  if (!st.pinned && st.config.pin_to) {
    st.config.pin_to->pin_current_thread(st.config.index);
    st.pinned = true;
  }
  auto& task = *d.task;
  auto scheduler = caf::actor_cast<caf::actor>(st.config.scheduler);
  if (!task.try_claim(d.epoch, detail::task_phase::running)) {
    // Cancelled while queued here: the scheduler still counts it. Stolen by the scheduler
    // (a newer epoch): it no longer does.
    if (task.claim.load() == detail::make_claim(d.epoch, detail::task_phase::cancelled) &&
        scheduler)
      self->send(scheduler, done_atom::value, st.config.index, d.task);
    return;
  }
  detail::set_thread_blocking_hook(&st.hook);
  st.ctx.set_gpus(std::move(d.gpus));
  task.started_us = detail::now_us();
  begin_on_devices(*st.config.node, st.ctx);
  auto outcome = execute_call(task, nullptr, st.ctx);
  finish_on_devices(*st.config.node, st.ctx, outcome);
  task.ended_us = detail::now_us();
  st.ctx.set_gpus({});
  if (task.cancel_requested.load()) {
    outcome.what = call_outcome::kind::error;
    outcome.err = {errc::cancelled,
                   "task '" + task.name + "' was cancelled while it ran"};
  }
  detail::set_thread_blocking_hook(nullptr);
  bool retry = outcome.what == call_outcome::kind::error &&
               outcome.err.code == errc::application_error &&
               task.options.retry_exceptions && task.attempts < task.options.max_retries;
  if (retry) {
    ++task.attempts;
    task.claim.store(detail::make_claim(d.epoch + 1, detail::task_phase::queued));
  } else {
    task.claim.store(detail::make_claim(d.epoch, detail::task_phase::finished));
    publish(*st.config.node, task, std::move(outcome));
  }
  if (scheduler) {
    self->send(scheduler, done_atom::value, st.config.index, d.task);
    if (retry) self->send(scheduler, submit_atom::value, d.task);
  } else if (retry) {
    task.result->set_error(node_stopped(*st.config.node, task.name, "could be retried"));
  }
}

} // namespace

caf::actor spawn_cpu_worker(caf::actor_system& sys, const worker_config& cfg,
                            bool detached) {
  auto body = [](caf::stateful_actor<std::unique_ptr<worker_state>>* self,
                 worker_config c) -> caf::behavior {
    self->state = std::make_unique<worker_state>(*c.node, c);
    return {
        [self](run_atom, dispatch& d) { run(self, d); },
    };
  };
  if (!detached) return sys.spawn(body, cfg);
  return sys.spawn<caf::detached>(body, cfg);
}

} // namespace swarm::actors
