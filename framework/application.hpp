#pragma once

#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "base/result.hpp"
#include "framework/actor.hpp"
#include "framework/detail/actor_type_info.hpp"
#include "framework/detail/callable_traits.hpp"
#include "framework/detail/function_entry.hpp"
#include "framework/stream.hpp"

namespace swarm {

/// A handle to a registered task function with signature `Sig`; cheap to copy.
template <class Sig> class task_fn;

/// A task function taking `Args...` and returning `R`.
template <class R, class... Args> class task_fn<R(Args...)> {
public:
  task_fn() = default;
  /// For the runtime: the function registered as `entry`.
  explicit task_fn(const detail::function_entry* entry) : entry_(entry) {}

  /// The name it was registered under.
  const std::string& name() const { return entry_->name; }
  /// For the runtime.
  const detail::function_entry* entry() const noexcept { return entry_; }

private:
  const detail::function_entry* entry_ = nullptr;
};

/// A handle to a registered streaming function: one writing items of `T` to a leading
/// `stream_writer<T>&`, then taking `Args...`. `submit` gives a `stream<T>`.
template <class Sig> class stream_fn;

/// A streaming function writing items of `T` and taking `Args...`.
template <class T, class... Args> class stream_fn<T(Args...)> {
public:
  stream_fn() = default;
  /// For the runtime: the function registered as `entry`.
  explicit stream_fn(const detail::function_entry* entry) : entry_(entry) {}

  /// The name it was registered under.
  const std::string& name() const { return entry_->name; }
  /// For the runtime.
  const detail::function_entry* entry() const noexcept { return entry_; }

private:
  const detail::function_entry* entry_ = nullptr;
};

/// A handle to a registered actor type. Methods called and constructors used from other
/// nodes are registered on it (before a runtime starts):
///
///     app.actor_type<counter>("counter").constructor<int>().method("add",
///     &counter::add);
template <class T> class actor_class {
public:
  actor_class() = default;
  /// For the runtime: the type registered as `info`.
  explicit actor_class(detail::actor_type_info* info) : info_(info) {}

  /// The name it was registered under.
  const std::string& name() const { return info_->name; }

  /// Lets other nodes call `m` (a member function of `T`) as `method_name`.
  template <class M> actor_class& method(std::string method_name, M m) {
    using traits = detail::callable_traits<M>;
    using R = typename traits::result_type;
    using item = typename traits::stream_item;
    detail::method_entry e;
    e.name = std::move(method_name);
    e.key = detail::member_key(m);
    e.params = detail::param_types(typename traits::params{});
    if constexpr (!std::is_void_v<item>) {
      static_assert(std::is_void_v<R>, "a streaming method returns void: it writes its "
                                       "items");
      e.result = &detail::type_of<uint64_t>();
      e.stream_item = &detail::type_of<detail::stored_t<item>>();
      e.fn = make_stream_method_invoker<item>(m, typename traits::params{});
    } else {
      e.result = &detail::type_of<detail::stored_t<R>>();
      e.fn = make_method_invoker<R>(m, typename traits::params{});
    }
    if (e.name.empty() || info_->find_method(e.name) || info_->find_method_key(e.key))
      throw failure{{errc::invalid_argument, "method '" + e.name + "' of actor type '" +
                                                 info_->name +
                                                 "' is empty or already registered"}};
    info_->methods.push_back(std::move(e));
    return *this;
  }

  /// Lets other nodes create the actor from arguments of types `Args...`.
  template <class... Args> actor_class& constructor() {
    static_assert(std::is_constructible_v<T, const Args&...>,
                  "the actor type has no constructor taking these arguments");
    detail::constructor_entry e;
    e.params = detail::param_types(detail::type_list<Args...>{});
    e.make = [](const std::vector<detail::boxed_value>& args) -> std::unique_ptr<actor> {
      return construct(args, std::index_sequence_for<Args...>{},
                       detail::type_list<Args...>{});
    };
    info_->constructors.push_back(std::move(e));
    return *this;
  }

  /// For the runtime.
  const detail::actor_type_info* info() const noexcept { return info_; }

private:
  template <class R, class M, class... Args>
  static detail::invoker make_method_invoker(M m, detail::type_list<Args...>) {
    return [m](void* self, context& ctx, const void* const* args) -> detail::boxed_value {
      auto& obj = *static_cast<T*>(static_cast<actor*>(self));
      auto bound = [&](auto&&... a) -> decltype(auto) { return (obj.*m)(a...); };
      return detail::call_unboxed<false, R, Args...>(bound, ctx, args,
                                                     std::index_sequence_for<Args...>{});
    };
  }

  template <class U, class M, class... Args>
  static detail::invoker make_stream_method_invoker(M m, detail::type_list<Args...>) {
    return [m](void* self, context& ctx, const void* const* args) -> detail::boxed_value {
      auto& obj = *static_cast<T*>(static_cast<actor*>(self));
      auto bound = [&](auto&&... a) { (obj.*m)(a...); };
      return detail::call_streaming<U, Args...>(bound, ctx, args,
                                                std::index_sequence_for<Args...>{});
    };
  }

  template <size_t... Is, class... Args>
  static std::unique_ptr<actor> construct(const std::vector<detail::boxed_value>& args,
                                          std::index_sequence<Is...>,
                                          detail::type_list<Args...>) {
    return std::make_unique<T>(*static_cast<const Args*>(args[Is].ptr.get())...);
  }

  detail::actor_type_info* info_ = nullptr;
};

namespace detail {

template <class R, class List> struct task_fn_of;
template <class R, class... Args> struct task_fn_of<R, type_list<Args...>> {
  using type = task_fn<R(Args...)>;
};
template <class T, class List> struct stream_fn_of;
template <class T, class... Args> struct stream_fn_of<T, type_list<Args...>> {
  using type = stream_fn<T(Args...)>;
};

} // namespace detail

/// Everything a program can run remotely, registered explicitly by name. Build it in
/// `main()`, then hand it to a `runtime`; it must outlive the runtime.
class application {
public:
  application();
  ~application();
  application(const application&) = delete;
  application& operator=(const application&) = delete;

  /// Registers a task function (a function or non-generic lambda). Its parameters are
  /// taken by value or const reference; a leading `context&` gives nested submission.
  /// A leading `stream_writer<T>&` makes it a streaming function: it returns void and
  /// writes items of `T`, which its caller reads as they come (a `stream_fn`).
  template <class F> auto function(std::string name, F f) {
    using traits = detail::callable_traits<std::decay_t<F>>;
    using R = typename traits::result_type;
    using params = typename traits::params;
    using item = typename traits::stream_item;
    auto entry = std::make_unique<detail::function_entry>();
    entry->name = std::move(name);
    entry->params = detail::param_types(params{});
    if constexpr (!std::is_void_v<item>) {
      static_assert(std::is_void_v<R>,
                    "a streaming function returns void: it writes its items");
      entry->result = &detail::type_of<uint64_t>();
      entry->stream_item = &detail::type_of<detail::stored_t<item>>();
      entry->fn = make_stream_invoker<item>(std::move(f), params{});
      return typename detail::stream_fn_of<item, params>::type{
          &add_function(std::move(entry))};
    } else {
      entry->result = &detail::type_of<detail::stored_t<R>>();
      entry->fn = make_invoker<traits::takes_context, R>(std::move(f), params{});
      return
          typename detail::task_fn_of<R, params>::type{&add_function(std::move(entry))};
    }
  }

  /// Registers an actor type: a class deriving from `swarm::actor`.
  template <class T> actor_class<T> actor_type(std::string name) {
    static_assert(std::is_base_of_v<actor, T>,
                  "actor types must derive from swarm::actor");
    actor_class<T> cls{&add_actor_type(std::move(name), typeid(T))};
    if constexpr (std::is_default_constructible_v<T>) cls.template constructor<>();
    return cls;
  }

  /// Looks up an actor type by name, checking it is a `T`; a clear error otherwise.
  template <class T>
  result<actor_class<T>> find_actor_type(const std::string& name) const {
    auto n = find_actor_info(name, typeid(T));
    if (!n) return n.err();
    return actor_class<T>{*n};
  }

  /// Looks up a function by name, checking its signature; a clear error otherwise.
  template <class Sig> result<task_fn<Sig>> find_function(const std::string& name) const {
    using traits = detail::callable_traits<Sig>;
    auto e = find_entry(name);
    if (!e) return e.err();
    auto want_params = detail::param_types(typename traits::params{});
    auto* want_result =
        &detail::type_of<detail::stored_t<typename traits::result_type>>();
    if (auto ok = check_signature(**e, want_params, want_result); !ok) return ok.err();
    return task_fn<Sig>{*e};
  }

  /// Looks up a streaming function by name, checking its items and parameters
  /// (`find_stream<int(int)>` for one writing `int`s and taking an `int`).
  template <class Sig> result<stream_fn<Sig>> find_stream(const std::string& name) const {
    using traits = detail::callable_traits<Sig>;
    auto e = find_entry(name);
    if (!e) return e.err();
    auto want_params = detail::param_types(typename traits::params{});
    auto* item = &detail::type_of<detail::stored_t<typename traits::result_type>>();
    if (auto ok = check_signature(**e, want_params, item, true); !ok) return ok.err();
    return stream_fn<Sig>{*e};
  }

  /// The entry registered as `name`, or an `unregistered` error listing what exists.
  result<const detail::function_entry*> find_entry(const std::string& name) const;

  /// The names of all registered functions.
  std::vector<std::string> function_names() const;

  /// Loads a library of user code (framework/plugin.hpp) and runs its entry point on
  /// this application: its functions and actor types are registered here, and the
  /// library stays loaded as long as the application. An error names the library and
  /// why: not found, no entry point, built against another Swarm, or a registration
  /// that fails (a name registered twice).
  result<void> load_library(const std::string& path);

  /// The names of all registered actor types.
  std::vector<std::string> actor_type_names() const;

  /// Whether an actor type named `name` is registered.
  bool has_actor_type(const std::string& name) const;

  /// What is registered about the actor type `name`, or nullptr.
  const detail::actor_type_info* actor_info(const std::string& name) const;

private:
  template <bool WithContext, class R, class F, class... Args>
  static detail::invoker make_invoker(F f, detail::type_list<Args...>) {
    return [f = std::move(f)](void*, context& ctx,
                              const void* const* args) mutable -> detail::boxed_value {
      return detail::call_unboxed<WithContext, R, Args...>(
          f, ctx, args, std::index_sequence_for<Args...>{});
    };
  }

  template <class T, class F, class... Args>
  static detail::invoker make_stream_invoker(F f, detail::type_list<Args...>) {
    return [f = std::move(f)](void*, context& ctx,
                              const void* const* args) mutable -> detail::boxed_value {
      return detail::call_streaming<T, Args...>(f, ctx, args,
                                                std::index_sequence_for<Args...>{});
    };
  }

  const detail::function_entry& add_function(std::unique_ptr<detail::function_entry> e);
  detail::actor_type_info& add_actor_type(std::string name, const std::type_info& type);
  result<detail::actor_type_info*> find_actor_info(const std::string& name,
                                                   const std::type_info& type) const;

  static result<void>
  check_signature(const detail::function_entry& e,
                  const std::vector<const detail::type_descriptor*>& params,
                  const detail::type_descriptor* result_type, bool stream = false);

  // Before the entries, so that the code they call is unloaded after them.
  std::vector<std::shared_ptr<void>> libraries_;
  std::map<std::string, std::unique_ptr<detail::function_entry>> functions_;
  std::map<std::string, std::unique_ptr<detail::actor_type_info>> actor_types_;
};

} // namespace swarm
