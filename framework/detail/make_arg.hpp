#pragma once

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "framework/detail/task_spec.hpp"
#include "framework/object_ref.hpp"

namespace swarm::detail {

/// Whether `X` is a list of futures (`std::vector<object_ref<T>>`).
template <class X> struct is_future_list : std::false_type {};
template <class T> struct is_future_list<std::vector<object_ref<T>>> : std::true_type {};

/// Boxes `x` as an argument for parameter type `Param`, checked at compile time.
template <class Param, class X> task_arg make_arg(X&& x) {
  using P = std::decay_t<Param>;
  using XD = std::decay_t<X>;
  if constexpr (is_object_ref<XD>::value) {
    static_assert(std::is_same_v<P, typename XD::value_type>,
                  "a future passed as an argument must have the parameter's type");
    return {{}, x.slot()};
  } else {
    static_assert(std::is_constructible_v<P, X&&>,
                  "argument cannot be converted to the parameter's type");
    return {boxed_value::make(P(std::forward<X>(x))), nullptr};
  }
}

/// Boxes `x` as is, for calls whose types are checked at run time.
template <class X> task_arg make_dynamic_arg(X&& x) {
  using XD = std::decay_t<X>;
  if constexpr (is_object_ref<XD>::value)
    return {{}, x.slot()};
  else if constexpr (std::is_convertible_v<XD, const char*>)
    return {boxed_value::make(std::string(x)), nullptr};
  else
    return {boxed_value::make(std::forward<X>(x)), nullptr};
}

/// Creates the result slot and spec of a call; the spec is not submitted yet.
class core;

task_ptr make_task(core& c, uint64_t owner, std::string name, std::vector<task_arg> args);

/// Sends a method call to an actor; the call fails at once when the actor is dead.
slot_ptr send_actor_call(core& c, actor_record& target, task_ptr call);

} // namespace swarm::detail
