#pragma once

#include <functional>
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

class core;

/// A slot for the values of `inputs`, combined by `combine` once every input is done,
/// without blocking a thread; the first failed input fails it, naming it.
slot_ptr
gather_slots(core& c, uint64_t owner, std::vector<slot_ptr> inputs,
             std::function<boxed_value(const std::vector<boxed_value>&)> combine);

/// The values of `refs` in order, as one slot (see `gather_slots`).
template <class T>
slot_ptr gather_refs(core& c, uint64_t owner, const std::vector<object_ref<T>>& refs) {
  std::vector<slot_ptr> inputs;
  inputs.reserve(refs.size());
  for (auto& r : refs)
    inputs.push_back(r.slot());
  return gather_slots(c, owner, std::move(inputs),
                      [](const std::vector<boxed_value>& values) {
                        std::vector<T> out;
                        out.reserve(values.size());
                        for (auto& v : values)
                          out.push_back(*static_cast<const T*>(v.ptr.get()));
                        return boxed_value::make(std::move(out));
                      });
}

/// As `make_arg`, and a list of futures for a list parameter is gathered into one (a
/// list of futures for a parameter of that type is a value: the refs themselves).
template <class Param, class X> task_arg make_arg_in(core& c, uint64_t owner, X&& x) {
  using XD = std::decay_t<X>;
  if constexpr (is_future_list<XD>::value && !std::is_same_v<std::decay_t<Param>, XD>) {
    static_assert(std::is_same_v<std::decay_t<Param>,
                                 std::vector<typename XD::value_type::value_type>>,
                  "a list of futures must be passed for a list of their type");
    return {{}, gather_refs(c, owner, x)};
  } else {
    return make_arg<Param>(std::forward<X>(x));
  }
}

/// Creates the result slot and spec of a call; the spec is not submitted yet.
task_ptr make_task(core& c, uint64_t owner, std::string name, std::vector<task_arg> args);

/// Sends a method call to an actor; the call fails at once when the actor is dead.
slot_ptr send_actor_call(core& c, actor_record& target, task_ptr call);

} // namespace swarm::detail
