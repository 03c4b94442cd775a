#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "framework/detail/core.hpp"
#include "framework/detail/stream_channel.hpp"
#include "framework/object_ref.hpp"

namespace swarm {

class context;

/// What a streaming task or actor method writes its items to: its first parameter,
/// `stream_writer<T>&`. The caller reads them as they come (`stream<T>`).
template <class T> class stream_writer {
public:
  using value_type = T; ///< what an item is

  /// For the runtime: a writer for the streaming task `ctx` runs.
  explicit stream_writer(context& ctx) : ctx_(&ctx) {}

  stream_writer(const stream_writer&) = delete;
  stream_writer& operator=(const stream_writer&) = delete;

  /// Sends `item` to the reader. Waits while the reader has the stream's `window` of
  /// items it did not take: a reader that falls behind slows the writer. A `cancelled`
  /// error once the reader went away or cancelled the task: return then; other errors
  /// when the item could not be stored or sent.
  result<void> write(T item);

  /// Items written so far by this run of the task.
  uint64_t written() const noexcept { return written_; }

  /// The context of the task, to submit, put or print from it.
  context& ctx() const noexcept { return *ctx_; }

private:
  context* ctx_;
  uint64_t written_ = 0;
};

namespace detail {

/// The channel of a stream of `T` read on `node`, `window` items ahead at most; its items
/// are owned by a fresh owner of `node`.
template <class T>
std::shared_ptr<stream_channel> make_stream_channel(core& node, size_t window) {
  return std::make_shared<stream_channel>(&node, node.new_owner_id(), window,
                                          &type_of<stored_t<T>>());
}

/// Calls the streaming `f(writer, args...)`; boxes how many items it wrote.
template <class T, class... Args, class F, size_t... Is>
boxed_value call_streaming(F& f, context& ctx, const void* const* args,
                           std::index_sequence<Is...>) {
  stream_writer<T> w{ctx};
  f(w, *static_cast<const std::decay_t<Args>*>(args[Is])...);
  return boxed_value::make(uint64_t{w.written()});
}

} // namespace detail

/// The reading end of a streaming task or actor-method call: its items, as futures, in
/// the order they were written, each as soon as it was. At most the stream's window of
/// items wait unread: the writer waits for the reader. A failure of the writer ends the
/// stream with its error, after the items written before it. Dropping the stream before
/// its end cancels the task.
template <class T> class stream {
public:
  stream() = default;

  /// For the runtime: the stream of the task whose future is `result`.
  stream(detail::core& node, detail::slot_ptr result,
         std::shared_ptr<detail::stream_channel> channel)
      : state_(std::make_shared<detail::stream_reader>(node, std::move(result),
                                                       std::move(channel))) {}

  /// Whether this is a stream at all.
  bool valid() const noexcept { return state_ != nullptr; }

  /// The next item's future, waiting up to `timeout` for it to be written: nullopt at
  /// the end; the writer's error after its last item; `timeout` when nothing came in
  /// time. An item written on another node may still be on its way: its future is
  /// ready once it arrived.
  result<std::optional<object_ref<T>>> next(std::chrono::milliseconds timeout = forever) {
    if (!state_) return error{errc::invalid_argument, "next on an empty stream"};
    auto slot = state_->next(detail::deadline_after(timeout));
    if (!slot) return slot.err();
    if (!*slot) return std::optional<object_ref<T>>{};
    return std::optional<object_ref<T>>{object_ref<T>{std::move(**slot)}};
  }

  /// The values of the items left, read until the end, within `timeout` in all; the
  /// first error (of the writer, or of an item) otherwise.
  result<std::vector<T>> collect(std::chrono::milliseconds timeout = forever) {
    auto deadline = detail::deadline_after(timeout);
    std::vector<T> out;
    for (;;) {
      auto item = next(detail::remaining(deadline));
      if (!item) return item.err();
      if (!*item) return out;
      auto v = (*item)->get(detail::remaining(deadline));
      if (!v) return v.err();
      out.push_back(std::move(*v));
    }
  }

  /// The task's own future: the number of items it wrote, or its error.
  object_ref<uint64_t> done() const {
    return state_ ? object_ref<uint64_t>{state_->task_result} : object_ref<uint64_t>{};
  }

  /// Cancels the task (see `context::cancel`): it stops at its next write.
  void cancel() {
    if (state_) state_->stop();
  }

private:
  std::shared_ptr<detail::stream_reader> state_;
};

} // namespace swarm
