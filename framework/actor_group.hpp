#pragma once

#include <string>
#include <vector>

#include "framework/actor_handle.hpp"
#include "framework/application.hpp"
#include "framework/detail/group_record.hpp"
#include "base/result.hpp"

namespace swarm {

/// A running supervision tree over actors. Handles to its children stay valid across
/// restarts: calls made while a child restarts wait for the fresh instance and run on
/// it in order, or fail with `actor_died` when the supervisor will not restart it. The
/// tree stops (children in reverse start order) when the last `actor_group` referring to
/// it goes.
class actor_group {
public:
  actor_group() = default;

  /// For the runtime.
  actor_group(detail::core& c, detail::group_record_ptr rec)
      : core_(&c), record_(std::move(rec)) {}

  /// The handle of actor child `id`, checked to be a `T`.
  template <class T>
  result<actor_handle<T>> child(const actor_class<T>& cls, const std::string& id) const {
    if (!record_) return error{errc::invalid_argument, "child of an empty actor_group"};
    auto rec = record_->child(id);
    if (!rec)
      return error{errc::invalid_argument,
                   "the supervision tree has no actor child '" + id + "'"};
    if (rec->spec().type_name != cls.name())
      return error{errc::type_mismatch, "child '" + id + "' is a " +
                                            rec->spec().type_name + ", not a " +
                                            cls.name()};
    return actor_handle<T>{*core_, std::move(rec)};
  }

  /// What the supervisors did so far: "start a", "exit a failure", "restart a", ...
  std::vector<std::string> events() const {
    return record_ ? record_->events() : std::vector<std::string>{};
  }

  /// False once the root supervisor gave up (restart intensity exceeded) or stopped.
  bool alive() const { return record_ && record_->alive(); }

private:
  detail::core* core_ = nullptr;
  detail::group_record_ptr record_;
};

} // namespace swarm
