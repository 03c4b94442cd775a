#include "actors/workers/stream_pool.hpp"

#include <algorithm>

namespace swarm::actors {

stream_pool::stream_pool(std::shared_ptr<gpu::device_api> api, int device)
    : api_(std::move(api)), device_(device) {}

result<std::shared_ptr<stream_pool>>
stream_pool::make(std::shared_ptr<gpu::device_api> api, int device, size_t initial) {
  std::shared_ptr<stream_pool> pool{new stream_pool(std::move(api), device)};
  for (size_t i = 0; i < std::max<size_t>(1, initial); ++i) {
    auto s = pool->api_->make_stream(device);
    if (!s) return s.err(); // the pool's destructor destroys those made
    pool->all_.push_back(*s);
    if (i > 0) pool->free_.push_back(*s);
  }
  return pool;
}

stream_pool::~stream_pool() {
  close();
}

gpu::stream_handle stream_pool::take(uint64_t slot) {
  std::lock_guard<std::mutex> guard{mtx_};
  if (closed_) return nullptr;
  if (slot == 0) return all_.front();
  if (auto i = taken_.find(slot); i != taken_.end()) return i->second;
  gpu::stream_handle s = nullptr;
  if (!free_.empty()) {
    s = free_.back();
    free_.pop_back();
  } else {
    auto made = api_->make_stream(device_);
    if (!made) return all_.front(); // shared, but ordered: better than none
    s = *made;
    all_.push_back(s);
  }
  taken_.emplace(slot, s);
  return s;
}

gpu::stream_handle stream_pool::held(uint64_t slot) const {
  std::lock_guard<std::mutex> guard{mtx_};
  if (closed_) return nullptr;
  if (slot == 0) return all_.front();
  auto i = taken_.find(slot);
  return i == taken_.end() ? nullptr : i->second;
}

void stream_pool::give_back(uint64_t slot) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = taken_.find(slot);
  if (i == taken_.end()) return;
  if (!closed_) free_.push_back(i->second);
  taken_.erase(i);
}

std::vector<gpu::stream_handle> stream_pool::all() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return closed_ ? std::vector<gpu::stream_handle>{} : all_;
}

void stream_pool::close() noexcept {
  std::lock_guard<std::mutex> guard{mtx_};
  if (closed_) return;
  closed_ = true;
  for (auto s : all_)
    api_->destroy_stream(device_, s);
  all_.clear();
  free_.clear();
}

} // namespace swarm::actors
