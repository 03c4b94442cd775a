#include "gpu/host_stream.hpp"

#include <exception>

namespace swarm::gpu {

host_stream::host_stream(std::shared_ptr<std::atomic<bool>> poisoned,
                         std::function<void(std::string)> on_fault)
    : poisoned_(std::move(poisoned)), on_fault_(std::move(on_fault)),
      thread_([this] { loop(); }) {}

host_stream::~host_stream() {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

host_stream::mark host_stream::enqueue(std::function<void()> work) {
  mark m;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    queue_.push_back(std::move(work));
    m = ++queued_;
  }
  changed_.notify_all();
  return m;
}

void host_stream::run(const std::function<void()>& work) {
  {
    std::unique_lock<std::mutex> lock{mtx_};
    if (!busy_ && queue_.empty()) {
      busy_ = true;
      auto m = ++queued_;
      lock.unlock();
      execute(work);
      lock.lock();
      busy_ = false;
      finished_ = m;
      lock.unlock();
      changed_.notify_all();
      return;
    }
  }
  wait(enqueue(work));
}

host_stream::mark host_stream::now() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return queued_;
}

bool host_stream::passed(mark m) const {
  std::lock_guard<std::mutex> guard{mtx_};
  return finished_ >= m;
}

void host_stream::wait(mark m) const {
  std::unique_lock<std::mutex> lock{mtx_};
  changed_.wait(lock, [&] { return finished_ >= m; });
}

void host_stream::loop() {
  std::unique_lock<std::mutex> lock{mtx_};
  for (;;) {
    changed_.wait(lock, [&] { return !busy_ && (!queue_.empty() || stopping_); });
    if (queue_.empty()) return; // stopping, and all that was queued ran
    auto work = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    execute(work);
    lock.lock();
    busy_ = false;
    ++finished_;
    changed_.notify_all();
  }
}

void host_stream::execute(const std::function<void()>& work) noexcept {
  if (poisoned_->load(std::memory_order_acquire)) return;
  try {
    work();
  } catch (const std::exception& e) {
    on_fault_(e.what());
  } catch (...) {
    on_fault_("a kernel threw");
  }
}

} // namespace swarm::gpu
