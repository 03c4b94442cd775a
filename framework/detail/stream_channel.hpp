#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "base/result.hpp"
#include "framework/detail/object_slot.hpp"

namespace swarm::detail {

class core;

/// Where the code of a streaming task writes its items, on the node that runs it.
class stream_sink {
public:
  virtual ~stream_sink();

  /// Sends item `seq` (the items the code wrote before it), valued `v`, waiting while the
  /// reader has `window` items it did not take yet; `cancelled` once the reader went
  /// away or the task was cancelled. An item the reader has (a run again of a task
  /// writes its items again) is dropped.
  virtual result<void> write(uint64_t seq, boxed_value v,
                             const std::atomic<bool>& cancelled) = 0;

  /// The reader took `taken` items in all: room for more (from another node).
  virtual void taken(uint64_t taken) { (void)taken; }
};

/// What `taken` says once the reader went away: the writer stops.
inline constexpr uint64_t reader_gone = ~uint64_t{0};

/// The id of item `seq` of a stream whose items are owned by `items_owner`.
inline object_id stream_item_id(uint64_t items_owner, uint64_t seq) {
  return {items_owner, seq};
}

/// The reading end of a stream, on the caller's node: its items in order, at most
/// `window` of them written and not taken. It is the sink, too, of a task run on the
/// caller's node; items written on another node come in through `deliver`. The task's
/// result says how the stream ended: the number of items written, or the error after
/// the items before it.
class stream_channel final : public stream_sink {
public:
  /// A stream of items owned by `items_owner` (a fresh owner id on the reader's node,
  /// `node`, whose store a writer there puts its items in).
  stream_channel(core* node, uint64_t items_owner, size_t window,
                 const type_descriptor* item_type);

  uint64_t items_owner() const noexcept { return items_owner_; }
  size_t window() const noexcept { return window_; }
  /// What the items hold, to decode those that come from another node.
  const type_descriptor* item_type() const noexcept { return item_type_; }

  /// Whether item `seq` is still to come (not a repeat).
  bool expects(uint64_t seq) const;

  result<void> write(uint64_t seq, boxed_value v,
                     const std::atomic<bool>& cancelled) override;

  /// Item `seq` came from another node: false, ignored, when it came before (a task run
  /// again after its node was lost writes its items again).
  bool deliver(uint64_t seq, slot_ptr item);

  /// Called with the number of items taken, every quarter window taken (with the
  /// channel's lock released): the writer on another node gets room; `reader_gone`
  /// once the reader closed it.
  void on_taken(std::function<void(uint64_t)> f);

  /// The next item, waiting up to `deadline`: nullopt once `result` (the task's) says
  /// every item was taken; the task's error once the items before it were taken;
  /// `timeout` when nothing came in time.
  result<std::optional<slot_ptr>> next(const slot_ptr& result,
                                       object_slot::clock::time_point deadline);

  /// Wakes readers (the task's result is done).
  void notify();

  /// The reader went away: writers get `cancelled` (one on another node is told),
  /// items kept are dropped.
  void close();

  /// Items taken by the reader so far.
  uint64_t taken() const;

private:
  core* const node_;
  const uint64_t items_owner_;
  const size_t window_;
  const type_descriptor* const item_type_;
  // Guards the items and counts (with cv_): the reader's thread blocks in next(), a
  // local task's in write(); the owner actor delivers items from other nodes.
  mutable std::mutex mtx_;
  std::condition_variable cv_;
  std::map<uint64_t, slot_ptr> items_; // written, not taken, by seq
  uint64_t written_ = 0;               // local writes, and the next seq delivered
  uint64_t taken_ = 0;
  uint64_t acked_ = 0;
  bool closed_ = false;
  std::function<void(uint64_t)> on_taken_;
};

/// Cancels the task whose future is `result`, if it still runs or waits.
void cancel_task(core& node, const slot_ptr& result);

/// The reading end of a streaming task's channel, with the task's future: woken when the
/// task ends, and cancelling the task when dropped before its end.
struct stream_reader {
  stream_reader(core& n, slot_ptr r, std::shared_ptr<stream_channel> c)
      : node(&n), task_result(std::move(r)), channel(std::move(c)) {
    std::weak_ptr<stream_channel> weak = channel;
    task_result->when_done([weak] {
      if (auto ch = weak.lock()) ch->notify();
    });
  }
  stream_reader(const stream_reader&) = delete;
  stream_reader& operator=(const stream_reader&) = delete;
  ~stream_reader() { stop(); }

  /// The next item's slot, waiting up to `deadline`; nullopt at the end.
  result<std::optional<slot_ptr>> next(object_slot::clock::time_point deadline) {
    return channel->next(task_result, deadline);
  }
  /// Cancels the task (it stops at its next write) and closes the channel.
  void stop() {
    if (!task_result->done()) cancel_task(*node, task_result);
    channel->close();
  }

  core* node;
  slot_ptr task_result;
  std::shared_ptr<stream_channel> channel;
};

} // namespace swarm::detail
