#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/result.hpp"

namespace swarm::detail {

class device_memory;

/// One allocation on a GPU of this node. Given back to the device's GPU worker when the
/// last buffer holding it goes.
struct device_block {
  device_block(std::shared_ptr<device_memory> m, uint32_t dev, uint64_t ep, void* p,
               size_t n)
      : memory(std::move(m)), device(dev), epoch(ep), ptr(p), bytes(n) {}
  device_block(const device_block&) = delete;
  device_block& operator=(const device_block&) = delete;
  ~device_block();

  std::shared_ptr<device_memory> memory;
  uint32_t device;
  /// The incarnation of the device's worker that handed it out: a worker restarted after
  /// a fault lost it.
  uint64_t epoch;
  void* ptr;
  size_t bytes;

  /// Its bytes in host memory, where the bulk path sends them from: staging memory
  /// (`device_memory::staging`) taken when the value is laid out or read on the host,
  /// and read in from the device once, from the start as the chunks sent need them
  /// (`mirror_upto` bytes so far; `mirror_read` once all); kept while the block lives.
  // Guards the mirror: each buffer holding the block reads or sends it on its own thread
  // (a task's, a bulk send's); the first to need a part reads it in.
  std::mutex host_mtx;
  std::shared_ptr<uint8_t> mirror;
  size_t mirror_upto = 0;
  bool mirror_read = false;

  /// Set on memory another node process of this host shared, mapped here: what runs
  /// when it goes (unmapping it, telling the sharer), instead of giving it back to the
  /// device's worker.
  std::function<void()> unmap;
};

/// A device buffer arriving from another node as bytes, written to a device of this node
/// chunk by chunk as they land in its host memory (`land`), so that the task that reads
/// it there finds it on the device (`take`) instead of copying it when it starts. Shared
/// by the thread receiving it, the task taking it, and the node reclaiming its memory.
class device_arrival {
public:
  device_arrival(std::shared_ptr<device_block> b, const uint8_t* host)
      : block_(std::move(b)), host_(host), size_(block_->bytes) {}

  /// Copies the bytes [offset, offset + length), landed in host memory, to the device.
  /// A failed copy gives the device's memory up: the buffer is read from the host.
  void land(uint64_t offset, uint64_t length) noexcept;

  /// The device all its bytes are on; -1 before, or once it has none (taken, reclaimed,
  /// or a copy failed).
  int landed_on() const;

  /// Its block on `device` once all its bytes are there, for the one reader that takes
  /// it; null otherwise (not landed, another device, or taken before).
  std::shared_ptr<device_block> take(uint32_t device);

  /// Gives its device memory up when it is on `device`, not taken.
  void reclaim(uint32_t device);

private:
  mutable std::mutex mtx_;
  std::shared_ptr<device_block> block_;
  const uint8_t* host_;
  uint64_t size_;
  uint64_t landed_ = 0;
};

/// What another node process of this host maps a block by (see `device_memory::share`).
struct shared_block {
  std::string device; ///< the device's UUID
  std::string handle; ///< the backend's (a CUDA IPC handle)
};

/// The GPUs of a node as the framework uses them; the node implements it with one GPU
/// worker actor per device. Calls block the calling thread (a task's).
class device_memory {
public:
  virtual ~device_memory() = default;

  /// "cuda" or "host" (devices simulated in host memory).
  virtual const char* backend() const noexcept = 0;

  /// `bytes` on `device`, waiting up to `wait` while it has no room:
  /// `device_out_of_memory` when it still has none.
  virtual result<std::shared_ptr<device_block>>
  allocate(uint32_t device, size_t bytes, std::chrono::milliseconds wait) = 0;
  /// Gives `b` back to its device's worker (nothing when that one restarted since).
  virtual void release(device_block& b) noexcept = 0;
  /// Whether `b` is still there: `object_lost` when its device failed since it was made.
  virtual result<void> holds(const device_block& b) const = 0;

  /// Copies `src` into `dst` (the same size), on the stream of `slot` on `dst`'s device.
  virtual result<void> copy(const device_block& dst, const device_block& src,
                            uint64_t slot) = 0;
  /// Copies `length` bytes of `src` from `offset` to `dst`, on the stream of `slot`.
  virtual result<void> to_host(void* dst, const device_block& src, size_t offset,
                               size_t length, uint64_t slot) = 0;
  /// Copies `length` bytes from `src` to `dst` at `offset`, on the stream of `slot`.
  virtual result<void> from_host(const device_block& dst, size_t offset, const void* src,
                                 size_t length, uint64_t slot) = 0;

  /// Makes `device` current on the calling thread, before a task given it runs.
  virtual void make_current(uint32_t device) noexcept = 0;

  /// The stream (a `cudaStream_t`) the context `slot` queues its work on, on `device`;
  /// nullptr while the device's worker restarts.
  virtual void* stream(uint32_t device, uint64_t slot) = 0;
  /// Waits for the work of `slot` on `device` once its task returned. `device_failed`
  /// when a kernel faulted: the buffers the device held are lost, and its worker
  /// restarts on a fresh context, or, where CUDA cannot give one to this process, the
  /// device is `lost` to it.
  virtual result<void> finish(uint32_t device, uint64_t slot) = 0;

  /// At least `bytes` of host memory the devices copy to and from at full speed (pinned),
  /// reused once let go; null when none can be had.
  virtual std::shared_ptr<uint8_t> staging(size_t bytes) = 0;

  /// A device buffer of `bytes` arriving into `host`, landed on a device of this node
  /// with room for it now (none waits for room); null when none has. Its memory is given
  /// up when an allocation would otherwise wait for room on that device.
  virtual std::shared_ptr<device_arrival> arrival(size_t bytes, const uint8_t* host) = 0;

  /// Names this node's host for sharing device memory between node processes (equal
  /// for those of one host, backend and boot); empty when its backend cannot.
  virtual std::string sharing_host() const = 0;
  /// What another node process of this host maps `b` by: an error when `b` cannot be
  /// shared (it is itself mapped from elsewhere, or its device failed).
  virtual result<shared_block> share(const device_block& b) = 0;
  /// The `bytes` another node process of this host shared as `s`, mapped on this node's
  /// device of the same UUID; `released` runs once the block goes.
  virtual result<std::shared_ptr<device_block>>
  map_shared(const shared_block& s, size_t bytes, std::function<void()> released) = 0;

  /// Why devices of this node are lost to this process (a fault took their context,
  /// which CUDA cannot open again while the process runs); empty while none is.
  virtual std::string lost() const = 0;
};

/// The stream slot of the call running on this thread when it was given GPUs (its
/// context's owner id), else 0: a buffer read or written from within a call is then
/// ordered after the work the call queued on its own stream.
uint64_t thread_gpu_slot() noexcept;

/// Sets this thread's slot for its scope, and puts back the one before.
class gpu_slot_scope {
public:
  explicit gpu_slot_scope(uint64_t slot) noexcept;
  ~gpu_slot_scope();
  gpu_slot_scope(const gpu_slot_scope&) = delete;
  gpu_slot_scope& operator=(const gpu_slot_scope&) = delete;

private:
  uint64_t before_;
};

inline device_block::~device_block() {
  if (memory) memory->release(*this);
}

} // namespace swarm::detail
