#include "actors/common/inline_unit.hpp"

#include <caf/abstract_actor.hpp>
#include <caf/actor_control_block.hpp>
#include <caf/actor_system.hpp>
#include <caf/resumable.hpp>
#include <caf/scheduler/abstract_coordinator.hpp>

#include <stdexcept>

namespace swarm::actors {

inline_unit::inline_unit(caf::strong_actor_ptr target)
    : caf::execution_unit(target ? target->home_system : nullptr),
      target_(std::move(target)) {
  job_ = target_ ? dynamic_cast<caf::resumable*>(target_->get()) : nullptr;
  if (!job_)
    throw std::invalid_argument{"inline_unit: the target is not a scheduled actor"};
}

void inline_unit::exec_later(caf::resumable* job) {
  // `job` comes with a reference the scheduler would have kept while it runs.
  if (job != job_) {
    system().scheduler().enqueue(job);
    return;
  }
  for (size_t round = 0; round < max_rounds; ++round) {
    switch (job->resume(this, throughput)) {
    case caf::resumable::resume_later:
      continue;
    case caf::resumable::done:
    case caf::resumable::awaiting_message:
    case caf::resumable::shutdown_execution_unit:
      caf::intrusive_ptr_release(job);
      return;
    }
  }
  // Still busy: the scheduler goes on with it (and keeps the reference).
  system().scheduler().enqueue(job);
}

} // namespace swarm::actors
