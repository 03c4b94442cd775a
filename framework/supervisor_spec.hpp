#pragma once

#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "framework/application.hpp"
#include "framework/detail/actor_record.hpp"
#include "framework/supervision.hpp"

namespace swarm {

namespace detail {

/// One child of a supervisor: an actor or a nested supervisor.
struct group_child {
  child_policy policy;
  actor_spec actor; // when `nested` is empty
  std::shared_ptr<const struct group_spec> nested;
};

/// A supervision tree over actors, as data.
struct group_spec {
  strategy how = strategy::one_for_one;
  restart_intensity intensity;
  std::vector<group_child> children;
};

} // namespace detail

/// Describes a supervision tree over actors: Erlang/OTP child specs, a strategy and a
/// restart intensity. A child that crashes (throws `actor_failure`) is restarted by its
/// supervisor per the strategy, not by its own `max_restarts`; past the intensity the
/// supervisor stops its children and fails to its parent. Start it with
/// `context::supervise`; children start in the order added and stop in reverse.
class supervisor_spec {
public:
  /// A supervisor of no children yet, restarting them by `how` within `intensity`.
  explicit supervisor_spec(strategy how = strategy::one_for_one,
                           restart_intensity intensity = {})
      : spec_{how, intensity, {}} {}

  /// Adds an actor child `id` (unique in the whole tree) of type `T`, constructed from
  /// `xs...` at every (re)start.
  template <class T, class... Xs>
  supervisor_spec& child(child_policy policy, const actor_class<T>& cls, Xs&&... xs) {
    detail::group_child c;
    c.policy = std::move(policy);
    c.actor.type_name = cls.name();
    c.actor.factory = detail::make_actor_factory<T>(std::forward<Xs>(xs)...);
    spec_.children.push_back(std::move(c));
    return *this;
  }

  /// Adds a permanent actor child.
  template <class T, class... Xs>
  supervisor_spec& child(std::string id, const actor_class<T>& cls, Xs&&... xs) {
    return child(child_policy{std::move(id), restart_type::permanent, {}}, cls,
                 std::forward<Xs>(xs)...);
  }

  /// Adds a nested supervisor `id`; it waits for its own children when it stops.
  supervisor_spec& child(std::string id, const supervisor_spec& nested) {
    detail::group_child c;
    c.policy = {std::move(id), restart_type::permanent,
                shutdown_policy{false, std::chrono::milliseconds::max()}};
    c.nested = std::make_shared<const detail::group_spec>(nested.spec_);
    spec_.children.push_back(std::move(c));
    return *this;
  }

  /// For the runtime: the tree as built.
  const detail::group_spec& spec() const noexcept { return spec_; }

private:
  detail::group_spec spec_;
};

} // namespace swarm
