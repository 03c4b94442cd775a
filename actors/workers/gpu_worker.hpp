#pragma once

#include <caf/fwd.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>

#include "actors/workers/protocol.hpp"
#include "actors/workers/stream_pool.hpp"
#include "base/error.hpp"
#include "base/node_log.hpp"
#include "gpu/device_api.hpp"

namespace swarm::actors {

/// Where each device's GPU worker publishes what the threads using the device need: the
/// worker's incarnation (a buffer of an older one is lost), the worker itself, and its
/// pool of streams. A device has none while its worker restarts.
class device_board {
public:
  struct view {
    uint64_t epoch = 0;
    caf::actor worker;
    std::shared_ptr<stream_pool> streams;
  };

  explicit device_board(size_t devices);

  size_t size() const noexcept { return views_.size(); }
  std::shared_ptr<const view> get(uint32_t device) const;
  void publish(uint32_t device, std::shared_ptr<const view> v);
  /// Takes the view of `epoch` down; a newer one stays.
  void withdraw(uint32_t device, uint64_t epoch);
  /// A fresh incarnation number for `device`.
  uint64_t next_epoch(uint32_t device);
  /// Keeps why `device`'s context went down, for the incarnation that reopens it.
  void note_fault(uint32_t device, std::string why);
  std::string last_fault(uint32_t device) const;
  /// Marks `device` lost to this process: a fault took its context, and CUDA cannot
  /// open it again until the process is replaced.
  void lose(uint32_t device, std::string why);
  /// Why `device` is lost; empty while it is not.
  std::string lost(uint32_t device) const;
  /// Takes every view down, for good.
  void close();

private:
  std::vector<std::shared_ptr<const view>> views_;
  std::vector<std::shared_ptr<const std::string>> faults_;
  std::vector<std::shared_ptr<const std::string>> lost_;
  std::unique_ptr<std::atomic<uint64_t>[]> epochs_;
  std::atomic<bool> closed_{false};
};

struct gpu_worker_config {
  std::shared_ptr<gpu::device_api> api;
  std::shared_ptr<device_board> board;
  uint32_t device = 0;
  /// Bytes it may hand out; 0: the device's memory.
  size_t memory_bytes = 0;
  /// Streams its pool starts with; it makes more when more tasks run at once.
  size_t streams = 4;
  /// A thread of its own: opening a device, cudaMalloc and cudaFree block. Off only on
  /// CAF's test coordinator, which runs scheduled actors alone.
  bool own_thread = true;
  std::string node;
  node_log log;
};

/// A grant of device memory: an address and the incarnation that handed it out, or why
/// there is none.
struct device_grant {
  uint64_t address = 0;
  uint64_t epoch = 0;
  error err;
  bool ok() const noexcept { return address != 0; }
};

/// Memory another process shared, mapped on a device here, to unmap: `released` runs
/// once it is unmapped (or its context is gone).
struct unmap_request {
  uint64_t address = 0;
  uint64_t epoch = 0;
  std::function<void()> released;
};

/// Spawns the GPU worker of one device. It owns the device's context (opened at start,
/// reset first when it is a restart), a pool of streams (one per running task), and the
/// memory it hands out:
/// what fits is granted at once (from blocks freed earlier of the same size once the
/// work queued before their free is done, or fresh); what does not waits, first come
/// first served, until frees make room or its wait ends (`device_out_of_memory`). Its
/// exit frees everything it handed out; its supervisor restarts it after a fault. Memory
/// another process shared is unmapped as a freed block is reused: once the work queued
/// before it was let go is done (polled every millisecond meanwhile). A
/// restart that cannot reopen the device marks it lost and refuses every allocation,
/// without restarting again.
caf::actor spawn_gpu_worker(caf::actor_system& sys, gpu_worker_config cfg);

} // namespace swarm::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::actors::device_grant)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::actors::unmap_request)
