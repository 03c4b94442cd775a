#pragma once

// Calls by name with values whose types are known only at run time: what a driver
// written in another language (the Python package, python/) builds on. Values are boxed
// (`detail::boxed_value`: a pointer and the descriptor of its type); a descriptor's
// `shape` says how to make one from the language's own values.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "framework/context.hpp"
#include "framework/detail/actor_type_info.hpp"
#include "framework/detail/function_entry.hpp"

namespace swarm {

/// A future of a value whose type is known at run time. Copies name the same object.
class dynamic_ref {
public:
  dynamic_ref() = default;
  /// For the runtime: the object of `slot`, whose value has type `type`.
  dynamic_ref(detail::slot_ptr slot, const detail::type_descriptor* type)
      : slot_(std::move(slot)), type_(type) {}

  /// The dynamic form of a typed ref, made in C++.
  template <class T> static dynamic_ref of(const object_ref<T>& ref) {
    return {ref.slot(), &detail::type_of<detail::stored_t<T>>()};
  }

  /// Whether it names an object at all.
  bool valid() const noexcept { return slot_ != nullptr; }
  /// Whether the object (or the error that replaced it) exists yet.
  bool ready() const { return slot_ && slot_->done(); }
  /// The object's cluster-wide id (a valid ref only).
  const object_id& id() const { return slot_->id(); }
  /// The type its value has (a task's result type, a put value's type).
  const detail::type_descriptor& type() const { return *type_; }
  /// For the runtime.
  const detail::slot_ptr& slot() const noexcept { return slot_; }

  /// Waits up to `timeout` for the value and returns it (not a copy: it lives as long as
  /// the pointer does), or the error.
  result<std::shared_ptr<const void>> get(std::chrono::milliseconds timeout) const;

private:
  detail::slot_ptr slot_;
  const detail::type_descriptor* type_ = nullptr;
};

/// The reading end of a streaming task or actor call: its items' futures in the order
/// they were written. Dropping every copy before the end cancels the task.
class dynamic_stream {
public:
  dynamic_stream() = default;
  /// For the runtime: the items `reader` receives, each of type `item`.
  dynamic_stream(std::shared_ptr<detail::stream_reader> reader,
                 const detail::type_descriptor* item)
      : reader_(std::move(reader)), item_(item) {}

  /// The next item's future, waiting up to `timeout` for it: nullopt at the end, the
  /// writer's error after its last item, `timeout` when nothing came in time.
  result<std::optional<dynamic_ref>> next(std::chrono::milliseconds timeout);
  /// The task's own future: how many items it wrote, or its error.
  dynamic_ref done() const;
  /// Cancels the task: it stops at its next write.
  void cancel();
  /// The type of its items.
  const detail::type_descriptor& item_type() const { return *item_; }

private:
  std::shared_ptr<detail::stream_reader> reader_;
  const detail::type_descriptor* item_ = nullptr;
};

/// One argument of a dynamic call: a value, or a future whose value is passed.
struct dynamic_arg {
  detail::boxed_value value; ///< the value, when `ref` is empty
  dynamic_ref ref;           ///< the future, when set
};

/// An actor created by its type's registered name.
class dynamic_actor {
public:
  dynamic_actor() = default;
  /// For the runtime: the actor of `rec`, of type `type`.
  dynamic_actor(detail::actor_record_ptr rec, const detail::actor_type_info* type)
      : record_(std::move(rec)), type_(type) {}

  /// Its registered type: name, methods and their signatures.
  const detail::actor_type_info& type() const { return *type_; }
  /// For the runtime.
  const detail::actor_record_ptr& record() const noexcept { return record_; }
  /// Whether it has not died for good.
  bool alive() const;
  /// Why the actor died, or an empty string.
  std::string death_reason() const;

private:
  detail::actor_record_ptr record_;
  const detail::actor_type_info* type_ = nullptr;
};

/// Submits, puts, spawns and calls by name on behalf of one context's owner, with the
/// types checked at run time: a wrong name, count or type of arguments is an error
/// naming the function or method, the parameter and both types.
class dynamic_calls {
public:
  /// Calls made as `ctx`'s owner.
  explicit dynamic_calls(context& ctx) : ctx_(&ctx) {}

  /// The function registered as `name`; `unregistered` when there is none.
  result<const detail::function_entry*> function(const std::string& name) const;
  /// The actor type registered as `name`; `unregistered` when there is none.
  result<const detail::actor_type_info*> actor_type(const std::string& name) const;

  /// Runs `f` with `args` somewhere; the error when the arguments do not suit it.
  result<dynamic_ref> submit(const detail::function_entry& f, const task_options& opts,
                             std::vector<dynamic_arg> args);
  /// Runs the streaming function `f` with `args` somewhere, at most `opts.stream_window`
  /// items ahead of the reader; the error when the arguments do not suit it.
  result<dynamic_stream> submit_stream(const detail::function_entry& f,
                                       const task_options& opts,
                                       std::vector<dynamic_arg> args);
  /// Stores a value; throws `failure` (`store_full`) when the store has no room.
  dynamic_ref put(detail::boxed_value v);
  /// Creates an actor of `type` with the constructor whose parameters `args` have; the
  /// error when none has them. A handle that could not be placed comes back dead.
  result<dynamic_actor> spawn(const detail::actor_type_info& type,
                              const actor_options& opts,
                              std::vector<detail::boxed_value> args);
  /// Calls method `m` of `a`; the error when the arguments do not suit it.
  result<dynamic_ref> call(const dynamic_actor& a, const detail::method_entry& m,
                           std::vector<dynamic_arg> args, int32_t priority = 0);
  /// Calls the streaming method `m` of `a`, at most `window` items ahead of the reader.
  result<dynamic_stream> call_stream(const dynamic_actor& a,
                                     const detail::method_entry& m,
                                     std::vector<dynamic_arg> args, uint32_t window,
                                     int32_t priority = 0);
  /// Cancels the task of `ref` (see `context::cancel`).
  bool cancel(const dynamic_ref& ref, bool force);
  /// Which of `refs` are ready once `k` are or `timeout` passed.
  std::vector<bool> wait(const std::vector<dynamic_ref>& refs, size_t k,
                         std::chrono::milliseconds timeout);
  /// Stops the actor; with `restart` it is restarted if its policy allows.
  void kill(const dynamic_actor& a, bool restart);

private:
  // A call of method `m` of `a`, or the error when the arguments do not suit it.
  result<detail::task_ptr> method_call(const dynamic_actor& a,
                                       const detail::method_entry& m,
                                       std::vector<dynamic_arg> args, int32_t priority);
  // A channel for the items of type `item` of a stream read here.
  std::shared_ptr<detail::stream_channel> channel(const detail::type_descriptor* item,
                                                  size_t window);

  context* ctx_;
};

} // namespace swarm
