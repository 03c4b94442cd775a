#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace swarm::gpu {

/// A stream of a device simulated in host memory, as a CUDA stream behaves: its work
/// runs in the order queued, asynchronously to the thread that queued it, on a thread of
/// its own; two streams run at once. A piece of work that throws faults the device for
/// good (`poisoned`, shared by its streams), as a kernel's illegal address makes a CUDA
/// context unusable: what is queued after it is skipped.
class host_stream {
public:
  /// How far a stream got: the work queued before a mark is done once `finished`
  /// reaches it.
  using mark = uint64_t;

  host_stream(std::shared_ptr<std::atomic<bool>> poisoned,
              std::function<void(std::string)> on_fault);
  /// Runs what is queued (skipped once poisoned), then ends its thread.
  ~host_stream();
  host_stream(const host_stream&) = delete;
  host_stream& operator=(const host_stream&) = delete;

  /// Queues `work` behind what is queued; its mark.
  mark enqueue(std::function<void()> work);
  /// Runs `work` in stream order and waits for it: on the calling thread when nothing
  /// is queued or running (the same order, without a hand-over), else on the stream's.
  void run(const std::function<void()>& work);
  /// The mark of the work queued so far.
  mark now() const;
  /// Whether the work up to `m` is done.
  bool passed(mark m) const;
  /// Waits until the work up to `m` is done.
  void wait(mark m) const;
  /// Waits until the work queued so far is done.
  void finish() const { wait(now()); }

private:
  void loop();
  // Runs one piece of work: skipped when poisoned, a fault when it throws.
  void execute(const std::function<void()>& work) noexcept;

  std::shared_ptr<std::atomic<bool>> poisoned_;
  std::function<void(std::string)> on_fault_;
  // The stream's queue, shared by the threads that queue work and the stream's own.
  mutable std::mutex mtx_;
  mutable std::condition_variable changed_;
  std::deque<std::function<void()>> queue_;
  mark queued_ = 0;
  mark finished_ = 0;
  bool busy_ = false; // a piece of work runs (on the stream's thread or a caller's)
  bool stopping_ = false;
  std::thread thread_;
};

} // namespace swarm::gpu
