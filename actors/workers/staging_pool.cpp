#include "actors/workers/staging_pool.hpp"

#include <algorithm>

namespace swarm::actors {

namespace {

// Sizes are rounded up to this, so that buffers of nearby sizes are reused.
constexpr size_t granule = size_t{1} << 20;

} // namespace

staging_pool::staging_pool(std::shared_ptr<gpu::device_api> api, size_t keep)
    : api_(std::move(api)), keep_(keep) {}

staging_pool::~staging_pool() {
  std::lock_guard<std::mutex> guard{mtx_};
  trim(0);
}

std::shared_ptr<uint8_t> staging_pool::take(size_t bytes) {
  auto size = (std::max<size_t>(bytes, 1) + granule - 1) / granule * granule;
  uint8_t* p = nullptr;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (auto i = free_.find(size); i != free_.end()) {
      p = i->second.second;
      kept_ -= size;
      free_.erase(i);
    }
  }
  if (!p) {
    auto fresh = api_->host_alloc(size);
    if (!fresh) {
      // Pinned memory ran short: what is kept goes, and it is asked once more.
      std::lock_guard<std::mutex> guard{mtx_};
      trim(0);
    }
    if (!fresh) fresh = api_->host_alloc(size);
    if (!fresh) return nullptr;
    p = static_cast<uint8_t*>(*fresh);
  }
  return {p, [pool = shared_from_this(), size](uint8_t* q) { pool->give_back(q, size); }};
}

size_t staging_pool::kept() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return kept_;
}

void staging_pool::give_back(uint8_t* p, size_t size) noexcept {
  std::lock_guard<std::mutex> guard{mtx_};
  if (size > keep_) {
    api_->host_free(p);
    return;
  }
  trim(keep_ - size);
  free_.emplace(size, std::pair{++clock_, p});
  kept_ += size;
}

void staging_pool::trim(size_t limit) noexcept {
  while (kept_ > limit) {
    auto oldest = std::min_element(free_.begin(), free_.end(), [](auto& a, auto& b) {
      return a.second.first < b.second.first;
    });
    kept_ -= oldest->first;
    api_->host_free(oldest->second.second);
    free_.erase(oldest);
  }
}

} // namespace swarm::actors
