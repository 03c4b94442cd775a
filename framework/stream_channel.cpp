#include "framework/detail/stream_channel.hpp"

#include <string>

#include "framework/detail/core.hpp"

namespace swarm::detail {

namespace {

// Writers wait in steps this long, to see a cancellation nobody signals.
constexpr auto cancel_poll = std::chrono::milliseconds(20);

error reader_went_away() {
  return {errc::cancelled, "the stream's reader went away or cancelled it"};
}

} // namespace

stream_sink::~stream_sink() = default;

stream_channel::stream_channel(core* node, uint64_t items_owner, size_t window,
                               const type_descriptor* item_type)
    : node_(node), items_owner_(items_owner), window_(window == 0 ? 1 : window),
      item_type_(item_type) {}

result<void> stream_channel::write(uint64_t seq, boxed_value v,
                                   const std::atomic<bool>& cancelled) {
  {
    std::unique_lock<std::mutex> guard{mtx_};
    if (seq < written_) return {}; // a run again writes what the reader has
    while (!closed_ && !cancelled.load() && written_ - taken_ >= window_)
      cv_.wait_for(guard, cancel_poll);
    if (closed_ || cancelled.load()) return reader_went_away();
  }
  auto slot = std::make_shared<object_slot>(stream_item_id(items_owner_, seq));
  auto lease = node_->admit(slot->id(), v);
  if (!lease) return lease.err();
  slot->set_value(std::move(v), std::move(*lease));
  std::lock_guard<std::mutex> guard{mtx_};
  if (closed_) return reader_went_away();
  items_.emplace(seq, std::move(slot));
  while (items_.count(written_) != 0)
    ++written_;
  cv_.notify_all();
  return {};
}

bool stream_channel::expects(uint64_t seq) const {
  std::lock_guard<std::mutex> guard{mtx_};
  return !closed_ && seq >= written_ && items_.count(seq) == 0;
}

bool stream_channel::deliver(uint64_t seq, slot_ptr item) {
  std::lock_guard<std::mutex> guard{mtx_};
  if (closed_ || seq < written_ || items_.count(seq) != 0) return false;
  items_.emplace(seq, std::move(item));
  while (items_.count(written_) != 0)
    ++written_;
  cv_.notify_all();
  return true;
}

void stream_channel::on_taken(std::function<void(uint64_t)> f) {
  std::lock_guard<std::mutex> guard{mtx_};
  on_taken_ = std::move(f);
}

result<std::optional<slot_ptr>>
stream_channel::next(const slot_ptr& result, object_slot::clock::time_point deadline) {
  std::unique_lock<std::mutex> guard{mtx_};
  for (;;) {
    if (closed_) return error{errc::cancelled, "the stream was closed by its reader"};
    if (auto it = items_.find(taken_); it != items_.end()) {
      auto item = std::move(it->second);
      items_.erase(it);
      ++taken_;
      cv_.notify_all(); // a local writer waits for room
      if (on_taken_ && taken_ - acked_ >= std::max<size_t>(1, window_ / 4)) {
        acked_ = taken_;
        auto f = on_taken_;
        auto n = taken_;
        guard.unlock();
        f(n);
      }
      return std::optional<slot_ptr>{std::move(item)};
    }
    if (result->done()) {
      auto r = result->read();
      if (!r) return r.err();
      auto written = *static_cast<const uint64_t*>(r->ptr.get());
      if (taken_ >= written) return std::optional<slot_ptr>{};
      return error{errc::object_lost, "stream " + result->id().to_string() +
                                          " ended after " + std::to_string(written) +
                                          " items, but item " + std::to_string(taken_) +
                                          " never arrived"};
    }
    if (object_slot::clock::now() >= deadline)
      return error{errc::timeout, "no item of stream " + result->id().to_string() +
                                      " came in time (" + std::to_string(taken_) +
                                      " taken)"};
    if (deadline == object_slot::clock::time_point::max())
      cv_.wait(guard);
    else
      cv_.wait_until(guard, deadline);
  }
}

void stream_channel::notify() {
  std::lock_guard<std::mutex> guard{mtx_};
  cv_.notify_all();
}

void stream_channel::close() {
  std::map<uint64_t, slot_ptr> dropped;
  std::function<void(uint64_t)> tell;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (closed_) return;
    closed_ = true;
    dropped.swap(items_);
    tell = on_taken_;
    cv_.notify_all();
  }
  if (tell) tell(reader_gone);
}

uint64_t stream_channel::taken() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return taken_;
}

void cancel_task(core& node, const slot_ptr& result) {
  if (auto task = result->producer()) node.cancel(*task);
}

} // namespace swarm::detail
