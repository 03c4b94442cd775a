#include "actors/scheduling/task_inbox.hpp"

namespace swarm::actors {

bool task_inbox::push(detail::task_ptr t, bool& accepted) {
  std::lock_guard<std::mutex> guard{mtx_};
  accepted = !closed_;
  if (closed_) return false;
  items_.push_back(std::move(t));
  if (wake_pending_) return false;
  wake_pending_ = true;
  return true;
}

std::vector<detail::task_ptr> task_inbox::drain() {
  std::vector<detail::task_ptr> out;
  std::lock_guard<std::mutex> guard{mtx_};
  out.swap(items_);
  wake_pending_ = false;
  return out;
}

bool task_inbox::empty() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return items_.empty();
}

std::vector<detail::task_ptr> task_inbox::close() {
  std::vector<detail::task_ptr> out;
  std::lock_guard<std::mutex> guard{mtx_};
  closed_ = true;
  out.swap(items_);
  return out;
}

bool task_inbox::closed() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return closed_;
}

} // namespace swarm::actors
