#include "actors/idle_workers.hpp"

#include <algorithm>

namespace swarm::actors {

bool idle_workers::lend(entry e) {
  std::lock_guard<std::mutex> guard{mtx_};
  if (closed_ || e.generation != generation_) return false;
  entries_.push_back(std::move(e));
  return true;
}

std::optional<idle_workers::entry> idle_workers::take_for(const resource_set& demand) {
  std::lock_guard<std::mutex> guard{mtx_};
  for (auto i = entries_.rbegin(); i != entries_.rend(); ++i)
    if (i->lease == demand) {
      auto e = std::move(*i);
      entries_.erase(std::next(i).base());
      return e;
    }
  return std::nullopt;
}

bool idle_workers::take_back(size_t index) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = std::find_if(entries_.begin(), entries_.end(),
                        [index](const entry& e) { return e.index == index; });
  if (i == entries_.end()) return false;
  entries_.erase(i);
  return true;
}

uint64_t idle_workers::renew() {
  std::vector<entry> dropped;
  std::lock_guard<std::mutex> guard{mtx_};
  dropped.swap(entries_);
  return ++generation_;
}

void idle_workers::close() {
  std::vector<entry> dropped;
  std::lock_guard<std::mutex> guard{mtx_};
  closed_ = true;
  dropped.swap(entries_);
}

} // namespace swarm::actors
