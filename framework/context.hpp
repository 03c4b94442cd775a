#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "framework/actor_group.hpp"
#include "framework/actor_handle.hpp"
#include "framework/application.hpp"
#include "framework/detail/core.hpp"
#include "framework/detail/make_arg.hpp"
#include "framework/detail/value_pool.hpp"
#include "framework/device_buffer.hpp"
#include "framework/object_ref.hpp"
#include "framework/options.hpp"
#include "framework/placement_group.hpp"
#include "framework/stream.hpp"
#include "framework/supervisor_spec.hpp"

namespace swarm {

/// Which of the references given to `wait` are ready.
template <class T> struct wait_result {
  std::vector<object_ref<T>> ready;   ///< done (a value or an error), in the order given
  std::vector<object_ref<T>> pending; ///< the others, in the order given
};

/// Submits tasks, creates actors, puts and waits on objects on behalf of one owner (the
/// driver, a task, or an actor). The owner of a call's result is the context it came
/// from.
class context {
public:
  /// For the runtime: a context of `owner` on node `c`.
  context(detail::core& c, uint64_t owner) : core_(&c), owner_(owner) {}

  // -- tasks ----------------------------------------------------------------------------

  /// Runs `f(xs...)` somewhere and returns a future of its result at once. Arguments may
  /// be values or futures (`object_ref`), whose values are passed once they exist.
  template <class R, class... Args, class... Xs>
  object_ref<detail::future_value_t<R>> submit(const task_fn<R(Args...)>& f, Xs&&... xs) {
    return submit(task_options{}, f, std::forward<Xs>(xs)...);
  }

  /// As above, with resources, retries and priority. A function that returns a future
  /// (`object_ref<U>`, of work it started) gives a future of `U`, done when that is.
  template <class R, class... Args, class... Xs>
  object_ref<detail::future_value_t<R>> submit(const task_options& opts,
                                               const task_fn<R(Args...)>& f, Xs&&... xs) {
    static_assert(sizeof...(Args) == sizeof...(Xs), "wrong number of arguments");
    if (f.entry() == nullptr)
      throw failure{{errc::invalid_argument,
                     "submit with an empty task_fn: get one from application::function "
                     "or application::find_function"}};
    return object_ref<detail::future_value_t<R>>{submit_erased(
        *f.entry(), opts,
        {detail::make_arg_in<Args>(*core_, owner_, std::forward<Xs>(xs))...})};
  }

  /// Runs the streaming function `f(writer, xs...)` somewhere and returns its stream at
  /// once: its items come as it writes them, at most `stream_window` (of `opts`) ahead
  /// of what the stream's reader took. Arguments are as for a task.
  template <class T, class... Args, class... Xs>
  swarm::stream<T> submit(const stream_fn<T(Args...)>& f, Xs&&... xs) {
    return submit(task_options{}, f, std::forward<Xs>(xs)...);
  }

  /// As above, with resources, retries, priority and the stream's window. A run again
  /// (after its node was lost, or an exception with `retry_exceptions`) writes its
  /// items again: the reader gets those it did not have.
  template <class T, class... Args, class... Xs>
  swarm::stream<T> submit(const task_options& opts, const stream_fn<T(Args...)>& f,
                          Xs&&... xs) {
    static_assert(sizeof...(Args) == sizeof...(Xs), "wrong number of arguments");
    if (f.entry() == nullptr)
      throw failure{{errc::invalid_argument,
                     "submit with an empty stream_fn: get one from "
                     "application::function"}};
    auto channel = detail::make_stream_channel<T>(*core_, opts.stream_window);
    auto slot = submit_erased(
        *f.entry(), opts,
        {detail::make_arg_in<Args>(*core_, owner_, std::forward<Xs>(xs))...}, channel);
    return swarm::stream<T>{*core_, std::move(slot), std::move(channel)};
  }

  /// A future of the values of `refs` in order, ready once every one is, without
  /// blocking a thread: the fan-in of a list of futures. The first input that failed
  /// fails it, naming that input. `submit` passes a `std::vector<object_ref<T>>` to a
  /// `std::vector<T>` parameter this way.
  template <class T>
  object_ref<std::vector<T>> gather(const std::vector<object_ref<T>>& refs) {
    return object_ref<std::vector<T>>{detail::gather_refs(*core_, owner_, refs)};
  }

  /// `gather` under the name futures libraries give it.
  template <class T>
  object_ref<std::vector<T>> when_all(const std::vector<object_ref<T>>& refs) {
    return gather(refs);
  }

  /// A future of the index in `refs` of the first future done (ready or failed), without
  /// blocking a thread; `refs[i]` then holds the value or the error. Empty `refs` gives
  /// an `invalid_argument` error.
  template <class T>
  object_ref<uint64_t> when_any(const std::vector<object_ref<T>>& refs) {
    std::vector<detail::slot_ptr> inputs;
    inputs.reserve(refs.size());
    for (auto& r : refs)
      inputs.push_back(r.slot());
    return object_ref<uint64_t>{when_any_erased(std::move(inputs))};
  }

  /// Runs `f(value)` once `ref` is ready and returns the future of its result at once:
  /// a continuation, run by this node's workers as a task (no thread waits for `ref`;
  /// `f` may be any copyable callable: it never leaves this node). A failed `ref` fails
  /// it with `dependency_failed`; an exception from `f` fails it as a task's would.
  /// `opts`: its resources, retries and priority (its node is always this one). A
  /// continuation that returns a future gives a future of its value: continuations
  /// chain without waiting.
  template <class T, class F>
  auto then(const object_ref<T>& ref, F&& f, task_options opts = {})
      -> object_ref<detail::future_value_t<std::invoke_result_t<F&, const T&>>> {
    using R = std::decay_t<std::invoke_result_t<F&, const T&>>;
    static_assert(!std::is_void_v<R>, "a continuation returns a value");
    detail::invoker fn = [f = std::forward<F>(f)](void*, context&,
                                                  const void* const* args) mutable {
      return detail::box_result(R(f(*static_cast<const T*>(args[0]))));
    };
    return object_ref<detail::future_value_t<R>>{then_erased(
        ref.slot(), &detail::type_of<T>(), &detail::type_of<detail::stored_t<R>>(),
        std::move(fn), std::move(opts))};
  }

  /// Runs the function registered as `name`, with types checked at run time: a wrong
  /// name, argument count or type gives a future holding the error.
  template <class R, class... Xs>
  object_ref<R> call(const std::string& name, Xs&&... xs) {
    return object_ref<R>{
        call_erased(name, &detail::type_of<detail::stored_t<R>>(),
                    {detail::make_dynamic_arg(std::forward<Xs>(xs))...})};
  }

  /// Cancels a task, on this node or the one it was sent to. One that has not started
  /// never runs: its future holds a `cancelled` error. One that runs is asked to stop:
  /// its code sees `cancelled()` on its context, and its future holds a `cancelled`
  /// error once it returns, whatever it returned; with `force`, at once (the code runs on
  /// until it returns, and what it returns is dropped). Returns false when the task
  /// already finished, or is an actor call that runs (its effect on the actor stands).
  template <class T> bool cancel(const object_ref<T>& ref, bool force = false) {
    return cancel_slot(ref.slot(), force);
  }

  /// Whether the task this context runs was cancelled while it ran: long work checks it
  /// and returns early (its result is a `cancelled` error anyway). False outside a task.
  bool cancelled() const noexcept {
    return running_ != nullptr && running_->cancel_requested.load();
  }

  // -- objects --------------------------------------------------------------------------

  /// Stores a value and returns its reference. Throws `failure` (`store_full`) when the
  /// object store has no room. A value the caller keeps is copied (into the memory of a
  /// freed value of its type when the store kept one); a moved one is not.
  template <class T> object_ref<std::decay_t<T>> put(T&& value) {
    return object_ref<std::decay_t<T>>{
        put_erased(detail::box_for_store(core_->pool(), std::forward<T>(value)))};
  }

  /// Stores a value as `put` does, kept on `options.replicas` nodes of a cluster.
  template <class T>
  object_ref<std::decay_t<T>> put(T&& value, const put_options& options) {
    auto slot = put_erased(detail::box_for_store(core_->pool(), std::forward<T>(value)));
    if (options.replicas > 1) core_->replicate(slot, options.replicas);
    return object_ref<std::decay_t<T>>{std::move(slot)};
  }

  /// Waits until `k` of `refs` are ready or `timeout` passes.
  template <class T>
  wait_result<T> wait(const std::vector<object_ref<T>>& refs, size_t k,
                      std::chrono::milliseconds timeout = forever) {
    std::vector<detail::object_slot*> slots;
    slots.reserve(refs.size());
    for (auto& r : refs)
      slots.push_back(r.slot().get());
    auto done = detail::wait_for_slots(slots, k, detail::deadline_after(timeout));
    wait_result<T> out;
    for (size_t i = 0; i < refs.size(); ++i)
      (done[i] ? out.ready : out.pending).push_back(refs[i]);
    return out;
  }

  /// Waits up to `timeout` in all for every object of `refs` and returns their copies in
  /// order, or the first error (with the failing object's id in its message).
  template <class T>
  result<std::vector<T>> get(const std::vector<object_ref<T>>& refs,
                             std::chrono::milliseconds timeout = forever) {
    auto deadline = detail::deadline_after(timeout);
    std::vector<T> out;
    out.reserve(refs.size());
    for (auto& r : refs) {
      auto v = r.get(detail::remaining(deadline));
      if (!v) return v.err();
      out.push_back(std::move(*v));
    }
    return out;
  }

  /// Frees an object now, even while references remain; reading it then fails with
  /// `object_freed`.
  template <class T> void free(const object_ref<T>& ref) {
    if (ref.valid()) ref.slot()->free();
  }

  // -- actors ---------------------------------------------------------------------------

  /// Creates an actor of type `T`, constructed from `xs...`. When it cannot be created
  /// (no node can hold it, its name is taken, its type is not registered), the handle
  /// comes back dead, with the reason in `death_reason()`, and every call on it fails
  /// with `actor_died` and that reason: errors as values, as for tasks.
  template <class T, class... Xs>
  actor_handle<T> spawn(const actor_class<T>& cls, Xs&&... xs) {
    return spawn(actor_options{}, cls, std::forward<Xs>(xs)...);
  }

  /// As above, with restarts, resources and a name.
  template <class T, class... Xs>
  actor_handle<T> spawn(const actor_options& opts, const actor_class<T>& cls,
                        Xs&&... xs) {
    detail::actor_spec spec;
    spec.type_name = cls.name();
    spec.options = opts;
    spec.owner = owner_;
    spec.constructor_args = {detail::boxed_value::make(std::decay_t<Xs>(xs))...};
    spec.factory = detail::make_actor_factory<T>(std::forward<Xs>(xs)...);
    return actor_handle<T>{*core_, spawn_erased(std::move(spec))};
  }

  /// Finds the actor named `name`; `unregistered` when there is none.
  template <class T>
  result<actor_handle<T>> find_actor(const actor_class<T>& cls, const std::string& name) {
    auto rec = core_->find_actor(name);
    if (!rec) return rec.err();
    if ((*rec)->spec().type_name != cls.name())
      return error{errc::type_mismatch, "actor '" + name + "' is a " +
                                            (*rec)->spec().type_name + ", not a " +
                                            cls.name()};
    return actor_handle<T>{*core_, std::move(*rec)};
  }

  /// Stops an actor; with `restart` it is restarted if its policy allows.
  template <class T> void kill(const actor_handle<T>& a, bool restart = false) {
    core_->kill(*a.record(), restart);
  }

  /// Starts a supervision tree over actors (see `supervisor_spec`). Throws `failure`
  /// when a child id repeats or an actor type is not registered.
  actor_group supervise(const supervisor_spec& spec);

  // -- placement groups -----------------------------------------------------------------

  /// Reserves `opts.bundles` across the cluster's nodes as `opts.strategy` says, all or
  /// none (Ray's `CreatePlacementGroup`). Returns at once: the group waits until its
  /// bundles fit (`placement_group::wait`). An error when one never could (a bundle no
  /// node has the resources for, or no bundles).
  result<placement_group> create_placement_group(placement_group_options opts);

  /// Removes `g`: what it reserved is free again; work already in it runs on.
  result<void> remove_placement_group(const placement_group& g);

  // -- the cluster's key-value store ----------------------------------------------------

  /// Stores `value` under `key` in the control store's key-value table (as Ray's internal
  /// KV): it lives on the head's shard for `key`, on every member of that shard's chain
  /// (`gcs_replication`) and on disk with `gcs_dir`, so it outlives the caller, its node
  /// and any one control-store member. Returns once every chain member has it. Keys are
  /// 1-1024 bytes; values at most `max_message_bytes` of the cluster.
  result<void> kv_put(const std::string& key, std::vector<uint8_t> value);

  /// The value stored under `key`; nullopt when there is none.
  result<std::optional<std::vector<uint8_t>>> kv_get(const std::string& key);

  /// Removes `key`; nothing when it is absent.
  result<void> kv_erase(const std::string& key);

  // -- durable objects
  // --------------------------------------------------------------------

  /// Puts `value` as the durable object `name`: beyond the reference returned (an
  /// ordinary put), the value's ownership passes to the control store, which keeps it
  /// (replicated and persisted like the key-value table) until `free_durable`. It so
  /// survives this context, its node and any one control-store member; any node reads
  /// it with `get_durable`. Putting a name again replaces the value.
  template <class T>
  result<object_ref<std::decay_t<T>>> put_durable(const std::string& name, T&& value) {
    auto boxed = detail::boxed_value::make(std::forward<T>(value));
    if (auto ok = put_durable_erased(name, boxed); !ok) return ok.err();
    return object_ref<std::decay_t<T>>{put_erased(std::move(boxed))};
  }

  /// The durable object `name`: `object_freed` when there is none, `type_mismatch` when
  /// it holds another type than `T`.
  template <class T> result<T> get_durable(const std::string& name) {
    auto v = get_durable_erased(name, detail::type_of<T>());
    if (!v) return v.err();
    return *std::static_pointer_cast<const T>(*v);
  }

  /// Drops the durable object `name` from the control store (references to it stay).
  result<void> free_durable(const std::string& name);

  // -- introspection --------------------------------------------------------------------

  /// The registry of functions and actor types, to look them up by name.
  const application& app() const { return core_->app(); }

  /// The identity that owns what this context creates.
  uint64_t owner_id() const noexcept { return owner_; }

  /// The name of the node this context runs on ("local" for an embedded node).
  const std::string& node_name() const { return core_->node_name(); }

  /// The node's total resources.
  resource_set total_resources() const { return core_->total_resources(); }

  /// A snapshot of the node this context runs on.
  node_stats stats() const { return core_->stats(); }

  /// The GPUs the running task was given, as device indices of its node (for
  /// `cudaSetDevice`): `floor(g)` whole devices for a demand of `g`, and one shared for
  /// its fraction (two tasks of 0.5 get the same device). Empty for a task demanding
  /// none, and outside tasks.
  const std::vector<uint32_t>& gpu_ids() const noexcept { return gpus_; }

  // -- GPU memory -----------------------------------------------------------------------
  // `device` below is one of `gpu_ids()`; -1 is the first. Outside a task given GPUs
  // they fail with `invalid_argument`.

  /// `bytes` of memory on a device of the running task, waiting up to `wait` while the
  /// device has no room (other work's buffers hold it); `device_out_of_memory` when it
  /// still has none, or when `bytes` exceeds the device's memory.
  result<device_buffer>
  device_alloc(size_t bytes, std::chrono::milliseconds wait = std::chrono::seconds(10),
               int device = -1);

  /// A new buffer on a device of the running task holding `bytes` bytes of `data`.
  result<device_buffer> to_device(const void* data, size_t bytes, int device = -1);

  /// A new buffer on a device of the running task holding `values`.
  template <class T>
  result<device_buffer> to_device(const std::vector<T>& values, int device = -1) {
    static_assert(std::is_trivially_copyable_v<T>, "to_device copies plain data");
    return to_device(values.data(), values.size() * sizeof(T), device);
  }

  /// `b` on a device of the running task: `b` itself when it is there (nothing moves),
  /// a copy from another device of this node (a peer copy), or its bytes written from
  /// the host when it came from another node. `object_lost` when its device failed.
  result<device_buffer> on_device(const device_buffer& b, int device = -1);

  /// The stream (a `cudaStream_t`) to queue the running task's work on, on `device`:
  /// once the task returns, the runtime waits for it before the result is ready, and a
  /// kernel that faulted fails the task with `device_failed`. nullptr outside a task
  /// given GPUs.
  void* gpu_stream(int device = -1) const;

  /// What runs the node's GPUs: "cuda", "host" (devices simulated in host memory, where
  /// no kernel runs), or "" when it has none.
  const char* gpu_backend() const;

  // -- output
  // -----------------------------------------------------------------------------

  /// Prints `text` as output of the running task or actor call where its caller is: a
  /// caller on another node (a driver, say) prints it, each line as
  /// "(function on NODE) line", as Ray forwards its workers' output to the driver. Output
  /// of work called here, or printed outside any task, goes to this process's stdout.
  void print(std::string_view text);

  /// For the runtime: the task or call this context runs now; nullptr between them.
  void set_running(const detail::task_spec* task) noexcept { running_ = task; }
  /// For the runtime: the GPUs of the task this context runs now.
  void set_gpus(std::vector<uint32_t> gpus) noexcept { gpus_ = std::move(gpus); }

private:
  template <class T> friend class stream_writer;
  friend class dynamic_calls;

  // Writes item `seq` of the streaming task this context runs.
  template <class T> result<void> write_item(uint64_t seq, T&& item) {
    return write_erased(seq, detail::box_for_store(core_->pool(), std::forward<T>(item)));
  }
  result<void> write_erased(uint64_t seq, detail::boxed_value v);

  detail::slot_ptr
  submit_erased(const detail::function_entry& f, const task_options& opts,
                std::vector<detail::task_arg> args,
                std::shared_ptr<detail::stream_channel> stream = nullptr);
  detail::slot_ptr call_erased(const std::string& name,
                               const detail::type_descriptor* result,
                               std::vector<detail::task_arg> args);
  detail::slot_ptr put_erased(detail::boxed_value v);
  detail::slot_ptr when_any_erased(std::vector<detail::slot_ptr> inputs);
  detail::slot_ptr then_erased(detail::slot_ptr input,
                               const detail::type_descriptor* param,
                               const detail::type_descriptor* result, detail::invoker fn,
                               task_options opts);
  result<void> put_durable_erased(const std::string& name, const detail::boxed_value& v);
  result<std::shared_ptr<const void>>
  get_durable_erased(const std::string& name, const detail::type_descriptor& t);
  bool cancel_slot(const detail::slot_ptr& slot, bool force);
  detail::actor_record_ptr spawn_erased(detail::actor_spec spec);
  // The device `device` of `gpu_ids()` (-1: the first), or why there is none.
  result<uint32_t> task_device(int device, const char* what) const;
  // Where work in `bundle` runs, checked against what the bundle holds.
  result<std::string> bundle_node(const bundle_ref& bundle, const resource_set& demand);

  detail::core* core_;
  uint64_t owner_;
  const detail::task_spec* running_ = nullptr;
  std::vector<uint32_t> gpus_;
};

template <class T> result<void> stream_writer<T>::write(T item) {
  auto ok = ctx_->write_item(written_, std::move(item));
  if (ok) ++written_;
  return ok;
}

} // namespace swarm
