#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "base/result.hpp"
#include "gpu/device_api.hpp"

namespace swarm::actors {

/// The streams of one incarnation of a device's context. Each running task (a context's
/// slot) has a stream of its own, taken at its first use and given back once its work is
/// finished, so that one task's fault or synchronisation never waits on another's work.
/// When every stream is taken the pool makes another. Slot 0 (reads outside any task)
/// shares the first stream. Taken from task threads, hence a lock: a stream is a cached
/// resource, not protocol state.
class stream_pool {
public:
  /// Makes `initial` streams (at least one); an error when the device refuses one.
  static result<std::shared_ptr<stream_pool>> make(std::shared_ptr<gpu::device_api> api,
                                                   int device, size_t initial);

  ~stream_pool();
  stream_pool(const stream_pool&) = delete;
  stream_pool& operator=(const stream_pool&) = delete;

  /// The stream `slot` holds, taking one (or making one) at its first use; the shared
  /// first stream when the device refuses another; nullptr once closed.
  gpu::stream_handle take(uint64_t slot);
  /// The stream `slot` holds; nullptr when it holds none.
  gpu::stream_handle held(uint64_t slot) const;
  /// `slot`'s stream goes back to the pool (its work must be finished).
  void give_back(uint64_t slot);
  /// Every stream made, for work that must be ordered after all of them.
  std::vector<gpu::stream_handle> all() const;
  /// Destroys every stream: the context they belong to goes. Takes fail afterwards.
  void close() noexcept;

private:
  stream_pool(std::shared_ptr<gpu::device_api> api, int device);

  std::shared_ptr<gpu::device_api> api_;
  int device_;
  // Guards the streams: task threads take and give back; the GPU worker closes them.
  mutable std::mutex mtx_;
  bool closed_ = false;
  std::vector<gpu::stream_handle> all_; // all_[0] is slot 0's
  std::vector<gpu::stream_handle> free_;
  std::unordered_map<uint64_t, gpu::stream_handle> taken_;
};

} // namespace swarm::actors
