#pragma once

#include <caf/fwd.hpp>

#include <memory>
#include <string>

#include "actors/workers/gpu_worker.hpp"
#include "actors/workers/staging_pool.hpp"
#include "framework/detail/device_memory.hpp"
#include "gpu/device_api.hpp"

namespace swarm::actors {

/// The node's GPUs as tasks use them: allocations go to the device's GPU worker (which
/// may make them wait for room), copies and stream waits run on the calling thread
/// through the device API, and a failed device's worker is told to restart.
class node_devices final : public detail::device_memory,
                           public std::enable_shared_from_this<node_devices> {
public:
  /// `staging_keep`: bytes of staging memory kept for reuse (see `staging_pool`).
  node_devices(caf::actor_system& sys, std::shared_ptr<gpu::device_api> api,
               std::shared_ptr<device_board> board, std::string node,
               size_t staging_keep);

  /// Devices of the node.
  uint32_t count() const noexcept;
  const char* backend() const noexcept override { return api_->kind(); }

  result<std::shared_ptr<detail::device_block>>
  allocate(uint32_t device, size_t bytes, std::chrono::milliseconds wait) override;
  void release(detail::device_block& b) noexcept override;
  result<void> holds(const detail::device_block& b) const override;
  result<void> copy(const detail::device_block& dst, const detail::device_block& src,
                    uint64_t slot) override;
  result<void> to_host(void* dst, const detail::device_block& src, size_t offset,
                       size_t length, uint64_t slot) override;
  result<void> from_host(const detail::device_block& dst, size_t offset, const void* src,
                         size_t length, uint64_t slot) override;
  void make_current(uint32_t device) noexcept override {
    api_->make_current(static_cast<int>(device));
  }
  void* stream(uint32_t device, uint64_t slot) override;
  std::shared_ptr<uint8_t> staging(size_t bytes) override {
    return staging_->take(bytes);
  }
  std::shared_ptr<detail::device_arrival> arrival(size_t bytes,
                                                  const uint8_t* host) override;
  std::string sharing_host() const override { return api_->sharing_host(); }
  result<detail::shared_block> share(const detail::device_block& b) override;
  result<std::shared_ptr<detail::device_block>>
  map_shared(const detail::shared_block& s, size_t bytes,
             std::function<void()> released) override;
  std::string lost() const override;
  result<void> finish(uint32_t device, uint64_t slot) override;

  /// What one device's worker holds, for metrics.
  struct usage {
    uint32_t device = 0;
    std::string uuid;     ///< its identity, whatever its index (`gpu::device_info::uuid`)
    bool running = false; ///< its worker runs (not between a fault and its restart)
    uint64_t used = 0;    ///< bytes of live buffers
    uint64_t cached = 0;  ///< bytes of freed blocks kept for reuse
    uint64_t capacity = 0;
    uint64_t waiting = 0;  ///< allocations waiting for room
    uint64_t restarts = 0; ///< of its worker since the node started
  };

  /// Each device's usage, asking each worker (at most `timeout` each).
  std::vector<usage> usages(std::chrono::milliseconds timeout);

  /// For the node when it stops: no device is used after this (buffers still held
  /// read as lost).
  void close() { board_->close(); }

private:
  // The view of `b`'s device when `b` is of its current worker; why not otherwise.
  result<std::shared_ptr<const device_board::view>>
  live(const detail::device_block& b) const;
  result<std::shared_ptr<const device_board::view>> running(uint32_t device) const;
  // A failed device: its worker restarts.
  result<void> failed(const device_board::view& v, error e);
  // `bytes` on `device` from its worker, waiting up to `wait` for room.
  result<std::shared_ptr<detail::device_block>> ask(uint32_t device, size_t bytes,
                                                    std::chrono::milliseconds wait);
  // Gives up the memory of the arrivals on `device` not taken yet.
  void reclaim(uint32_t device);

  caf::actor_system& sys_;
  std::shared_ptr<gpu::device_api> api_;
  std::shared_ptr<device_board> board_;
  std::string node_;
  std::shared_ptr<staging_pool> staging_;
  // Device buffers arriving, or arrived, by the device each landed on (see `arrival`);
  // shared by the threads receiving them and the tasks allocating.
  std::mutex arrivals_mtx_;
  std::vector<std::pair<uint32_t, std::weak_ptr<detail::device_arrival>>> arrivals_;
  uint32_t next_arrival_ = 0; // the device the next one tries first
};

} // namespace swarm::actors
