#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "framework/actor.hpp"
#include "framework/detail/type_descriptor.hpp"
#include "framework/options.hpp"
#include "transport/codec.hpp"

namespace swarm::detail {

/// What it takes to create (and re-create) one actor.
struct actor_spec {
  std::string type_name;
  std::function<std::unique_ptr<actor>()> factory;
  /// The constructor's arguments, for creating it on another node.
  std::vector<boxed_value> constructor_args;
  actor_options options;
  /// Its name in the cluster's registry (the head's), when it is registered there
  /// rather than in this node's.
  std::string cluster_name;
  uint64_t owner = 0;
  /// The node that created it, when it is hosted here for another: that node restarts
  /// it elsewhere when this node is found dead.
  std::string owner_node;
  /// A state to restore the first instance from (an actor restarted on another node).
  std::vector<uint8_t> checkpoint;
  /// Also told each state saved (the owner on another node keeps it); may be empty.
  /// `seq` numbers the instance's states 1, 2, ... With `answer`, the host waits for
  /// the owner's answer (`taken_atom`): it holds the answer to a caller other than the
  /// owner until the owner keeps the state with the call's effect. False when no
  /// answer will come (the head found the owner dead): the state here is the actor's
  /// only one, and the host answers at once.
  std::function<bool(const std::vector<uint8_t>& state, uint64_t seq, bool answer)>
      on_checkpoint;
  /// How long a host waits for the owner's answer to a numbered state before it sends
  /// the state again (the first may have gone down with its connection).
  std::chrono::milliseconds checkpoint_resend{1000};

  /// The actor's name, in this node's registry or (moved there) in the cluster's; empty
  /// when it has none.
  const std::string& name() const {
    return options.name.empty() ? cluster_name : options.name;
  }
};

/// A factory that constructs a `T` from copies of `xs...`, as often as it is restarted.
template <class T, class... Xs>
std::function<std::unique_ptr<actor>()> make_actor_factory(Xs&&... xs) {
  static_assert(std::is_constructible_v<T, std::decay_t<Xs>&...>,
                "the actor type cannot be constructed from these arguments");
  static_assert((is_encodable_v<std::decay_t<Xs>> && ...),
                "actor constructor arguments must be encodable");
  return [args = std::make_tuple(std::decay_t<Xs>(std::forward<Xs>(xs))...)]() {
    return std::apply(
        [](auto&... a) -> std::unique_ptr<actor> { return std::make_unique<T>(a...); },
        args);
  };
}

/// The runtime's side of one live actor; handles share it. When the last handle of an
/// unnamed actor goes, the actor stops.
class actor_record : public std::enable_shared_from_this<actor_record> {
public:
  explicit actor_record(actor_spec spec)
      : spec_(std::move(spec)), checkpoint_(spec_.checkpoint) {}
  virtual ~actor_record();

  const actor_spec& spec() const noexcept { return spec_; }

  /// The node the actor lives on when that is not this one; empty otherwise.
  virtual std::string remote_node() const;

  /// The latest state the actor saved; a restart restores it.
  std::vector<uint8_t> checkpoint() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return checkpoint_;
  }

  void save_checkpoint(std::vector<uint8_t> state) {
    std::lock_guard<std::mutex> guard{mtx_};
    checkpoint_ = std::move(state);
  }

  /// Whether the actor died for good; calls then fail with `actor_died`.
  bool dead() const noexcept { return dead_.load(std::memory_order_acquire); }

  /// Whether the actor, stopped here, lives on elsewhere (its owner restarted it on
  /// another node): calls through this record, dead or not, are redirected there.
  virtual bool moved() const noexcept { return false; }

  /// Whether a call through it carries the method's registered name: the actor lives on
  /// another node, moved there, or is hosted here for an owner on another node, who may
  /// restart it elsewhere (a call here then follows it there).
  bool calls_by_name() const {
    return !spec_.owner_node.empty() || moved() || !remote_node().empty();
  }

  /// Why the actor died; empty while it lives.
  std::string death_reason() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return death_reason_;
  }

  /// Brings a dead actor back (its supervisor restarted it); returns why it had died.
  std::string revive() {
    std::lock_guard<std::mutex> guard{mtx_};
    dead_.store(false, std::memory_order_release);
    return std::exchange(death_reason_, {});
  }

  void mark_dead(std::string why) {
    std::lock_guard<std::mutex> guard{mtx_};
    death_reason_ = std::move(why);
    dead_.store(true, std::memory_order_release);
  }

private:
  actor_spec spec_;
  std::vector<uint8_t> checkpoint_;
  std::atomic<bool> dead_{false};
  // Guards checkpoint_ and death_reason_: hosts, supervisors and the directory write;
  // handles read them on callers' threads, and the record outlives its host.
  mutable std::mutex mtx_;
  std::string death_reason_;
};

using actor_record_ptr = std::shared_ptr<actor_record>;

} // namespace swarm::detail
