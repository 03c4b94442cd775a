#pragma once

#include <caf/actor_cast.hpp>
#include <caf/execution_unit.hpp>
#include <caf/fwd.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/message_id.hpp>

#include <cstddef>
#include <utility>

namespace swarm::actors {

/// Runs one scheduled actor on the thread that sends to it while the actor is idle, as
/// CAF's own workers run an actor they woke: a message to an idle actor costs no thread
/// handoff. A message to a running actor is queued for the thread running it, so the
/// actor still handles one message at a time and owns its state. After `max_rounds`
/// rounds of `throughput` messages the sender stops and the scheduler goes on. Whatever
/// the actor sends to others is scheduled as usual. The actor must not block.
class inline_unit final : public caf::execution_unit {
public:
  template <class Handle>
  explicit inline_unit(const Handle& target)
      : inline_unit(caf::actor_cast<caf::strong_actor_ptr>(target)) {}

  explicit inline_unit(caf::strong_actor_ptr target);

  void exec_later(caf::resumable* job) override;

  /// Sends `xs...` to the target, anonymously; runs it here when it is idle.
  template <class... Ts> void send(Ts&&... xs) {
    target_->get()->enqueue(caf::make_mailbox_element(nullptr, caf::make_message_id(), {},
                                                      std::forward<Ts>(xs)...),
                            this);
  }

  /// As `send`, to the target's urgent queue: it runs ahead of the ordinary messages
  /// waiting there (CAF's high message priority).
  template <class... Ts> void send_urgent(Ts&&... xs) {
    target_->get()->enqueue(
        caf::make_mailbox_element(nullptr,
                                  caf::make_message_id(caf::message_priority::high), {},
                                  std::forward<Ts>(xs)...),
        this);
  }

  static constexpr size_t throughput = 64;
  static constexpr size_t max_rounds = 4;

private:
  caf::strong_actor_ptr target_;
  caf::resumable* job_ = nullptr;
};

} // namespace swarm::actors
