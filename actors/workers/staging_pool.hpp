#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "gpu/device_api.hpp"

namespace swarm::actors {

/// Host memory a node's devices copy to and from at full speed (pinned, under CUDA),
/// reused: pinning memory costs about as much as the copy it speeds up, so a buffer given
/// back is kept for the next one of its size, up to `keep` bytes in all (the least
/// recently given back go first). Taken from the threads that send device buffers,
/// hence a lock: a cache of memory, not protocol state.
class staging_pool : public std::enable_shared_from_this<staging_pool> {
public:
  staging_pool(std::shared_ptr<gpu::device_api> api, size_t keep);
  ~staging_pool();
  staging_pool(const staging_pool&) = delete;
  staging_pool& operator=(const staging_pool&) = delete;

  /// At least `bytes` of staging memory, given back to the pool when the last holder
  /// lets go; null when the backend has none to give.
  std::shared_ptr<uint8_t> take(size_t bytes);

  /// Bytes kept for reuse now.
  size_t kept() const;

private:
  void give_back(uint8_t* p, size_t size) noexcept;
  // Frees the oldest kept buffers until at most `limit` bytes are kept; mtx_ held.
  void trim(size_t limit) noexcept;

  std::shared_ptr<gpu::device_api> api_;
  size_t keep_;
  // Guards the kept buffers: sending threads take them; the last holder's thread gives
  // them back.
  mutable std::mutex mtx_;
  size_t kept_ = 0;
  uint64_t clock_ = 0;
  // Kept buffers by size, each with when it was given back.
  std::multimap<size_t, std::pair<uint64_t, uint8_t*>> free_;
};

} // namespace swarm::actors
