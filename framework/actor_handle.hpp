#pragma once

#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "framework/application.hpp"
#include "framework/detail/actor_record.hpp"
#include "framework/detail/callable_traits.hpp"
#include "framework/detail/core.hpp"
#include "framework/detail/make_arg.hpp"
#include "framework/object_ref.hpp"

namespace swarm {

/// A reference to a live actor of type `T`; copies refer to the same actor. An unnamed
/// actor stops when its last handle goes.
template <class T> class actor_handle {
public:
  actor_handle() = default;

  /// For the runtime.
  actor_handle(detail::core& c, detail::actor_record_ptr rec)
      : core_(&c), record_(std::move(rec)) {}

  /// Calls `method(xs...)` on the actor and returns a future of the result at once. Calls
  /// made from one thread run in the order made. A method that returns a future
  /// (`object_ref<U>`) gives a future of `U`, done when that is: the actor takes its
  /// next calls meanwhile (an async method).
  template <class R, class... Args, class... Xs>
  object_ref<detail::future_value_t<R>> call(R (T::*method)(Args...), Xs&&... xs) const {
    return call_impl<R, Args...>(method, std::forward<Xs>(xs)...);
  }

  /// The same, for a const method.
  template <class R, class... Args, class... Xs>
  object_ref<detail::future_value_t<R>> call(R (T::*method)(Args...) const,
                                             Xs&&... xs) const {
    return call_impl<R, Args...>(method, std::forward<Xs>(xs)...);
  }

  /// Calls the streaming `method(writer, xs...)` on the actor and returns its stream at
  /// once: its items come as the method writes them, at most 16 ahead of what the
  /// stream's reader took (see `call_stream`). The actor takes no other call meanwhile.
  template <class U, class... Args, class... Xs>
  swarm::stream<U> call(void (T::*method)(stream_writer<U>&, Args...), Xs&&... xs) const {
    return call_stream(task_options{}.stream_window, method, std::forward<Xs>(xs)...);
  }

  /// As above, with at most `window` items written ahead of what the reader took.
  template <class U, class... Args, class... Xs>
  swarm::stream<U> call_stream(uint32_t window,
                               void (T::*method)(stream_writer<U>&, Args...),
                               Xs&&... xs) const {
    auto task = make_call<Args...>(std::forward<Xs>(xs)...);
    task->result_type = &detail::type_of<uint64_t>();
    if (record_->calls_by_name()) task->method = method_name(method);
    task->own_fn = [method](void* self, context& ctx,
                            const void* const* args) -> detail::boxed_value {
      auto& obj = *static_cast<T*>(static_cast<actor*>(self));
      auto bound = [&](auto&&... a) { (obj.*method)(a...); };
      return detail::call_streaming<U, Args...>(bound, ctx, args,
                                                std::index_sequence_for<Args...>{});
    };
    task->fn = &task->own_fn;
    auto channel = detail::make_stream_channel<U>(*core_, window);
    task->stream = channel;
    task->reader = channel;
    auto slot = detail::send_actor_call(*core_, *record_, std::move(task));
    return swarm::stream<U>{*core_, std::move(slot), std::move(channel)};
  }

  /// A handle to the same actor whose calls are latency-critical: across nodes they
  /// travel on the control lane, ahead of other calls and bulk transfers queued to the
  /// actor's node, and so do their results. (Calls through two handles may then arrive
  /// out of the order they were made in.)
  actor_handle latency_critical() const {
    auto h = *this;
    h.latency_critical_ = true;
    return h;
  }

  /// A handle to the same actor whose calls have `priority`: of the calls waiting for
  /// the actor, on its node from whichever node they came, higher priorities run first,
  /// and calls of one priority in the order they arrived. A running call is never
  /// interrupted. (Once a call of a priority other than 0 reached an actor, it takes
  /// each call from its own message: fewer calls per second than plain order.)
  actor_handle priority(int32_t priority) const {
    auto h = *this;
    h.priority_ = priority;
    return h;
  }

  /// Whether it names an actor (a default-made handle does not).
  bool valid() const noexcept { return record_ != nullptr; }

  /// Whether the actor died for good (an empty handle counts as dead).
  bool dead() const { return !record_ || record_->dead(); }

  /// Why it died, or could not be created; empty while it lives.
  std::string death_reason() const {
    return record_ ? record_->death_reason() : "empty handle";
  }

  /// The actor's registered type name.
  const std::string& type_name() const { return record_->spec().type_name; }

  /// For the runtime.
  const detail::actor_record_ptr& record() const noexcept { return record_; }
  /// For the runtime: the node the handle calls through.
  detail::core* node() const noexcept { return core_; }

private:
  // A call of the actor with arguments `xs` for parameters `Args`.
  template <class... Args, class... Xs> detail::task_ptr make_call(Xs&&... xs) const {
    static_assert(sizeof...(Args) == sizeof...(Xs), "wrong number of arguments");
    if (!record_)
      throw failure{
          {errc::invalid_argument,
           "call on an empty actor_handle: get one from spawn, find_actor or an "
           "actor_group"}};
    auto task =
        detail::make_task(*core_, record_->spec().owner, record_->spec().type_name,
                          {detail::make_arg_in<Args>(*core_, record_->spec().owner,
                                                     std::forward<Xs>(xs))...});
    task->params = detail::param_types(detail::type_list<Args...>{});
    task->options.latency_critical = latency_critical_;
    task->options.priority = priority_;
    return task;
  }

  template <class R, class... Args, class M, class... Xs>
  object_ref<detail::future_value_t<R>> call_impl(M method, Xs&&... xs) const {
    auto task = make_call<Args...>(std::forward<Xs>(xs)...);
    task->result_type = &detail::type_of<detail::stored_t<R>>();
    if (record_->calls_by_name()) task->method = method_name(method);
    task->own_fn = [method](void* self, context& ctx,
                            const void* const* args) -> detail::boxed_value {
      auto& obj = *static_cast<T*>(static_cast<actor*>(self));
      auto bound = [&](auto&&... a) -> decltype(auto) { return (obj.*method)(a...); };
      return detail::call_unboxed<false, R, Args...>(bound, ctx, args,
                                                     std::index_sequence_for<Args...>{});
    };
    task->fn = &task->own_fn;
    return object_ref<detail::future_value_t<R>>{
        detail::send_actor_call(*core_, *record_, std::move(task))};
  }

  // The registered name a call to another node carries; empty when not registered (the
  // node then fails the call, naming the fix).
  template <class M> std::string method_name(M method) const {
    auto* info = core_->app().actor_info(record_->spec().type_name);
    auto* m = info ? info->find_method_key(detail::member_key(method)) : nullptr;
    return m ? m->name : std::string{};
  }

  detail::core* core_ = nullptr;
  detail::actor_record_ptr record_;
  bool latency_critical_ = false;
  int32_t priority_ = 0;
};

namespace detail {

/// What a handle to an actor at `addr` that cannot be reached is: dead, saying why.
actor_record_ptr unreachable_actor(const actor_address& addr, std::string why);

/// The record a handle of type `T` read by `node` uses for the actor at `addr`; an
/// error when it is an actor of another type.
result<actor_record_ptr> read_actor(codec_context* node, const actor_address& addr,
                                    const std::type_info& type);

} // namespace detail

/// An actor handle travels in values (arguments, results, members of user types), to
/// other nodes too: what arrives is a handle to the same actor, whose calls go straight
/// to the actor's node. An actor whose handle left its node lives, like a named one,
/// until it is killed (or its node stops). A handle that arrives after its actor is gone
/// is dead, saying why.
template <class Inspector, class T> bool inspect(Inspector& f, actor_handle<T>& h) {
  bool has = h.valid();
  detail::actor_address addr;
  if constexpr (std::is_same_v<Inspector, binary_reader>) {
    if (!f(has)) return false;
    if (!has) {
      h = {};
      return true;
    }
    if (!f(addr)) return false;
    auto rec = detail::read_actor(f.context(), addr, typeid(T));
    if (!rec) return f.fail(rec.err().message);
    h = actor_handle<T>{*static_cast<detail::core*>(f.context()), std::move(*rec)};
    return true;
  } else {
    if (!has) return f(has);
    if constexpr (std::is_same_v<Inspector, basic_writer<detail::counting_sink>>)
      addr.type_name = h.type_name(); // counted, not sent: the actor is not hosted for it
    else
      addr = h.node()->address_of(h.record());
    return f(has, addr);
  }
}

} // namespace swarm
