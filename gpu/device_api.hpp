#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "gpu/gpu_devices.hpp"

namespace swarm::gpu {

/// A stream of a device: a `cudaStream_t` under CUDA.
using stream_handle = void*;
/// A point in a stream's work: a `cudaEvent_t` under CUDA.
using event_handle = void*;

/// What Swarm needs of a GPU runtime, behind one interface: the CUDA runtime when Swarm
/// was built with it, or devices simulated in host memory (the CPU fallback, to run and
/// test GPU pipelines where there is no GPU). Every call names its device and may come
/// from any thread; errors name the device and the runtime's reason.
class device_api {
public:
  virtual ~device_api() = default;

  /// "cuda" or "host".
  virtual const char* kind() const noexcept = 0;

  /// The devices, with their memory.
  virtual const std::vector<device_info>& devices() const noexcept = 0;

  /// Makes `device` ready for use (its context, peer access to the others). With
  /// `reset`, first throws away its context and everything allocated on it. After a
  /// sticky fault CUDA fails this until the process is replaced (documented, and seen on
  /// an H100: cudaErrorDevicesUnavailable), and so does the host backend.
  virtual result<void> open(int device, bool reset) = 0;

  /// Makes `device` current on the calling thread (`cudaSetDevice`): where the kernels
  /// of a task given it launch.
  virtual void make_current(int device) noexcept = 0;

  /// Device memory free now (`cudaMemGetInfo`): less than `devices()` says when other
  /// processes, or this one's context, hold some.
  virtual result<size_t> free_memory(int device) = 0;
  /// `bytes` of device memory.
  virtual result<void*> allocate(int device, size_t bytes) = 0;
  /// Frees `p` (`cudaFree`, which waits for the work on it); an error is the device's,
  /// e.g. a fault of earlier work, for the caller to report.
  virtual result<void> release(int device, void* p) noexcept = 0;

  /// `bytes` of host memory the devices copy to and from at full speed (pinned:
  /// `cudaHostAlloc`, for every device); plain memory on the host backend.
  virtual result<void*> host_alloc(size_t bytes) = 0;
  virtual void host_free(void* p) noexcept = 0;

  virtual result<stream_handle> make_stream(int device) = 0;
  virtual void destroy_stream(int device, stream_handle s) noexcept = 0;

  /// Copies `n` bytes from `src` on `src_device` to `dst` on `dst_device` (the same
  /// device, or a peer copy), ordered on `s` of `dst_device`, and waits for it.
  virtual result<void> copy(int dst_device, void* dst, int src_device, const void* src,
                            size_t n, stream_handle s) = 0;
  /// Copies `n` bytes of device memory to the host, ordered on `s`, and waits for it.
  virtual result<void> to_host(void* dst, int device, const void* src, size_t n,
                               stream_handle s) = 0;
  /// Copies `n` bytes of host memory to the device, ordered on `s`, and waits for it.
  virtual result<void> from_host(int device, void* dst, const void* src, size_t n,
                                 stream_handle s) = 0;

  /// Waits for the work queued on `s`. An error when the device failed (a kernel
  /// faulted): its context is then unusable until opened again with `reset`.
  virtual result<void> synchronize(int device, stream_handle s) = 0;

  /// Marks how far `s` has got: the event is done once all work queued on `s` before
  /// it is.
  virtual result<event_handle> record(int device, stream_handle s) = 0;
  /// Whether the work before `e` is done. A failed device runs nothing any more: done.
  virtual bool done(int device, event_handle e) noexcept = 0;
  /// Waits until `e` is done (or the device failed).
  virtual void wait(int device, event_handle e) noexcept = 0;
  virtual void destroy_event(int device, event_handle e) noexcept = 0;

  // -- sharing between processes of one host (CUDA IPC) ---------------------------------

  /// Names this host for sharing device memory between its processes: the same in every
  /// process of one boot of the machine using this backend; empty when it cannot share.
  virtual std::string sharing_host() const = 0;
  /// A handle by which another process of this host maps `p`, an allocation of
  /// `allocate` on `device` (`cudaIpcGetMemHandle`).
  virtual result<std::string> share(int device, void* p) = 0;
  /// Maps, on `device`, the `bytes` another process shared as `handle`
  /// (`cudaIpcOpenMemHandle`): device memory of this process until `close_shared`. The
  /// sharer must keep it allocated until then.
  virtual result<void*> open_shared(int device, const std::string& handle,
                                    size_t bytes) = 0;
  virtual void close_shared(int device, void* p) noexcept = 0;
};

/// The CUDA runtime's devices; nullptr when Swarm was built without CUDA, or there is
/// no driver or no device.
std::unique_ptr<device_api> make_cuda_api();

class host_stream;

/// `memory_bytes.size()` devices simulated in host memory, each with that much memory.
/// Copies, streams, events and memory limits behave as on a GPU: a stream's work runs in
/// order on a thread of its own, asynchronously to the thread that queued it, and a
/// "kernel" is a host function queued on a stream (`launch`). `fail`, or a kernel that
/// throws, makes a device fail for good, as a faulting kernel does under CUDA.
class host_device_api final : public device_api {
public:
  explicit host_device_api(const std::vector<size_t>& memory_bytes);
  ~host_device_api() override;

  const char* kind() const noexcept override { return "host"; }
  const std::vector<device_info>& devices() const noexcept override { return devices_; }
  result<void> open(int device, bool reset) override;
  void make_current(int) noexcept override {}
  result<size_t> free_memory(int device) override;
  result<void*> allocate(int device, size_t bytes) override;
  result<void> release(int device, void* p) noexcept override;
  result<void*> host_alloc(size_t bytes) override;
  void host_free(void* p) noexcept override;
  result<stream_handle> make_stream(int device) override;
  void destroy_stream(int device, stream_handle s) noexcept override;
  result<void> copy(int dst_device, void* dst, int src_device, const void* src, size_t n,
                    stream_handle s) override;
  result<void> to_host(void* dst, int device, const void* src, size_t n,
                       stream_handle s) override;
  result<void> from_host(int device, void* dst, const void* src, size_t n,
                         stream_handle s) override;
  result<void> synchronize(int device, stream_handle s) override;
  result<event_handle> record(int device, stream_handle s) override;
  bool done(int device, event_handle e) noexcept override;
  void wait(int device, event_handle e) noexcept override;
  void destroy_event(int device, event_handle e) noexcept override;
  /// Its allocations are memory files: another process of the host maps one by its
  /// handle (the sharer's pid and the file's descriptor, opened through /proc), as
  /// CUDA IPC maps device memory.
  std::string sharing_host() const override;
  result<std::string> share(int device, void* p) override;
  result<void*> open_shared(int device, const std::string& handle, size_t bytes) override;
  void close_shared(int device, void* p) noexcept override;

  /// Makes `device` fail as a sticky CUDA error does: until the process ends. The
  /// first fault is the one reported.
  void fail(int device, std::string why);

  /// Queues `kernel` on `s` of `device` and returns at once, as a kernel launch does:
  /// it runs after the work queued on `s` before it, on the stream's thread. One that
  /// throws faults the device (an illegal address, say): work queued after it is
  /// skipped, and the device's calls fail from then on.
  result<void> launch(int device, stream_handle s, std::function<void()> kernel);

private:
  struct state;
  // The stream `s` of `device` (null for the default stream), or why there is none.
  result<std::shared_ptr<host_stream>> stream_of(int device, stream_handle s);
  std::vector<std::shared_ptr<host_stream>> streams_of(int device);
  // Ends `device`'s streams, after the work queued on them.
  void drop_streams(int device) noexcept;
  // The device's fault, if it has one.
  result<void> failure(int device);
  // Runs `work` in `s`'s order and waits for it.
  result<void> in_order(int device, stream_handle s, const std::function<void()>& work);

  std::vector<device_info> devices_;
  std::unique_ptr<state> state_;
};

} // namespace swarm::gpu
