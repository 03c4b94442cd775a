#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "base/error.hpp"
#include "framework/detail/type_descriptor.hpp"
#include "framework/object_ref.hpp"

namespace swarm {
class context;
template <class T> class stream_writer;
} // namespace swarm

namespace swarm::detail {

template <class... Ts> struct type_list { static constexpr size_t size = sizeof...(Ts); };

template <class R, class... Args> struct signature_traits {
  using result_type = R;
  using params = type_list<Args...>;
  static constexpr bool takes_context = false;
  using stream_item = void;
};

template <class R, class... Args> struct signature_traits<R, context&, Args...> {
  using result_type = R;
  using params = type_list<Args...>;
  static constexpr bool takes_context = true;
  using stream_item = void;
};

/// A streaming function or method: it writes items of `T` to its leading writer.
template <class R, class T, class... Args>
struct signature_traits<R, stream_writer<T>&, Args...> {
  using result_type = R;
  using params = type_list<Args...>;
  static constexpr bool takes_context = false;
  using stream_item = T;
};

/// The signature of a function, function pointer or non-generic lambda, with a leading
/// `context&` or `stream_writer<T>&` parameter noted and dropped.
template <class F> struct callable_traits : callable_traits<decltype(&F::operator())> {};

template <class R, class... Args>
struct callable_traits<R (*)(Args...)> : signature_traits<R, Args...> {};

template <class R, class... Args>
struct callable_traits<R(Args...)> : signature_traits<R, Args...> {};

template <class C, class R, class... Args>
struct callable_traits<R (C::*)(Args...)> : signature_traits<R, Args...> {};

template <class C, class R, class... Args>
struct callable_traits<R (C::*)(Args...) const> : signature_traits<R, Args...> {};

/// Parameters may be taken by value or by const reference: values are immutable.
template <class P>
constexpr bool is_valid_param_v =
    !std::is_reference_v<P> || std::is_const_v<std::remove_reference_t<P>>;

/// What a function that returned a future gives back: its result is that future's
/// value, once there is one (see `forwarded_from`). It never travels.
struct forwarded_result {
  slot_ptr from;
};

template <class Inspector> bool inspect(Inspector& f, forwarded_result&) {
  if constexpr (std::is_same_v<Inspector, binary_reader>)
    return f.fail("a forwarded result is never sent");
  else
    return true;
}

/// The future `v` forwards, if it is a `forwarded_result`.
inline const forwarded_result* forwarded_from(const boxed_value& v) {
  return v.type && same_type(*v.type, type_of<forwarded_result>())
             ? static_cast<const forwarded_result*>(v.ptr.get())
             : nullptr;
}

/// Boxes what a function returned: a future it returned is forwarded.
template <class X> boxed_value box_result(X&& x) {
  if constexpr (is_object_ref<std::decay_t<X>>::value) {
    if (!x.valid())
      throw failure{{errc::invalid_argument, "returned an empty future (object_ref)"}};
    return boxed_value::make(forwarded_result{x.slot()});
  } else {
    return boxed_value::make(std::forward<X>(x));
  }
}

/// Calls `f(ctx?, args...)` and boxes what it returns.
template <bool WithContext, class R, class... Args, class F, size_t... Is>
boxed_value call_unboxed(F& f, context& ctx, const void* const* args,
                         std::index_sequence<Is...>) {
  auto call = [&]() -> decltype(auto) {
    if constexpr (WithContext)
      return f(ctx, *static_cast<const std::decay_t<Args>*>(args[Is])...);
    else
      return f(*static_cast<const std::decay_t<Args>*>(args[Is])...);
  };
  if constexpr (std::is_void_v<R>) {
    call();
    return boxed_value::make(unit{});
  } else {
    return box_result(call());
  }
}

template <class... Args>
std::vector<const type_descriptor*> param_types(type_list<Args...>) {
  static_assert((is_valid_param_v<Args> && ...),
                "Swarm task and method parameters must be taken by value or by const "
                "reference (objects are immutable)");
  return {&type_of<std::decay_t<Args>>()...};
}

} // namespace swarm::detail
