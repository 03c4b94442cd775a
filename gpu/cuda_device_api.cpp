#include "gpu/device_api.hpp"

#include <cstring>

#ifdef SWARM_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace swarm::gpu {

#ifdef SWARM_WITH_CUDA

namespace {

error cuda_error(errc code, int device, const char* what, cudaError_t e) {
  return {code, std::string{"CUDA device "} + std::to_string(device) + ": " + what +
                    " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
                    ")"};
}

// Errors after which the context is lost until the device is reset.
bool sticky(cudaError_t e) {
  switch (e) {
  case cudaErrorIllegalAddress:
  case cudaErrorLaunchFailure:
  case cudaErrorHardwareStackError:
  case cudaErrorIllegalInstruction:
  case cudaErrorMisalignedAddress:
  case cudaErrorInvalidAddressSpace:
  case cudaErrorInvalidPc:
  case cudaErrorAssert:
  case cudaErrorLaunchTimeout:
  case cudaErrorECCUncorrectable:
    return true;
  default:
    return false;
  }
}

// A sticky error fails the device; any other is a call it refused, and it goes on.
result<void> check(int device, const char* what, cudaError_t e) {
  if (e == cudaSuccess) return {};
  return cuda_error(sticky(e) ? errc::device_failed : errc::device_error, device, what,
                    e);
}

class cuda_device_api final : public device_api {
public:
  explicit cuda_device_api(std::vector<device_info> devices)
      : devices_(std::move(devices)) {}

  const char* kind() const noexcept override { return "cuda"; }
  const std::vector<device_info>& devices() const noexcept override { return devices_; }

  result<void> open(int device, bool reset) override {
    if (reset) {
      // After a sticky error every call, cudaSetDevice too, reports it again: reset
      // regardless, then start afresh.
      cudaSetDevice(device);
      cudaGetLastError();
      if (auto ok = check(device, "cudaDeviceReset", cudaDeviceReset()); !ok) return ok;
    }
    if (auto ok = check(device, "cudaSetDevice", cudaSetDevice(device)); !ok) return ok;
    if (auto ok = check(device, "cudaFree(0)", cudaFree(nullptr)); !ok) return ok;
    for (auto& peer : devices_) {
      int can = 0;
      if (peer.index == device ||
          cudaDeviceCanAccessPeer(&can, device, peer.index) != cudaSuccess || !can)
        continue;
      auto e = cudaDeviceEnablePeerAccess(peer.index, 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled)
        cudaGetLastError();
      else if (auto ok = check(device, "cudaDeviceEnablePeerAccess", e); !ok)
        return ok;
    }
    return {};
  }

  void make_current(int device) noexcept override { cudaSetDevice(device); }

  result<size_t> free_memory(int device) override {
    if (auto ok = check(device, "cudaSetDevice", cudaSetDevice(device)); !ok)
      return ok.err();
    size_t free = 0, total = 0;
    if (auto ok = check(device, "cudaMemGetInfo", cudaMemGetInfo(&free, &total)); !ok)
      return ok.err();
    return free;
  }

  result<void*> allocate(int device, size_t bytes) override {
    if (auto ok = check(device, "cudaSetDevice", cudaSetDevice(device)); !ok)
      return ok.err();
    void* p = nullptr;
    auto e = cudaMalloc(&p, bytes);
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      return cuda_error(errc::device_out_of_memory, device, "cudaMalloc", e);
    }
    if (auto ok = check(device, "cudaMalloc", e); !ok) return ok.err();
    return p;
  }

  result<void> release(int device, void* p) noexcept override {
    if (auto ok = check(device, "cudaSetDevice", cudaSetDevice(device)); !ok) return ok;
    return check(device, "cudaFree", cudaFree(p));
  }

  result<void*> host_alloc(size_t bytes) override {
    void* p = nullptr;
    auto e = cudaHostAlloc(&p, bytes, cudaHostAllocPortable);
    if (e != cudaSuccess) {
      cudaGetLastError();
      return cuda_error(errc::device_out_of_memory, 0, "cudaHostAlloc", e);
    }
    return p;
  }

  void host_free(void* p) noexcept override {
    if (cudaFreeHost(p) != cudaSuccess) cudaGetLastError();
  }

  result<stream_handle> make_stream(int device) override {
    if (auto ok = check(device, "cudaSetDevice", cudaSetDevice(device)); !ok)
      return ok.err();
    cudaStream_t s = nullptr;
    auto e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (auto ok = check(device, "cudaStreamCreate", e); !ok) return ok.err();
    return static_cast<stream_handle>(s);
  }

  void destroy_stream(int device, stream_handle s) noexcept override {
    if (cudaSetDevice(device) == cudaSuccess)
      cudaStreamDestroy(static_cast<cudaStream_t>(s));
  }

  result<void> copy(int dst_device, void* dst, int src_device, const void* src, size_t n,
                    stream_handle s) override {
    if (auto ok = check(dst_device, "cudaSetDevice", cudaSetDevice(dst_device)); !ok)
      return ok;
    auto stream = static_cast<cudaStream_t>(s);
    auto e = dst_device == src_device
                 ? cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, stream)
                 : cudaMemcpyPeerAsync(dst, dst_device, src, src_device, n, stream);
    if (auto ok = check(dst_device, "device copy", e); !ok) return ok;
    return check(dst_device, "cudaStreamSynchronize", cudaStreamSynchronize(stream));
  }

  result<void> to_host(void* dst, int device, const void* src, size_t n,
                       stream_handle s) override {
    return host_copy(device, dst, src, n, cudaMemcpyDeviceToHost, s);
  }

  result<void> from_host(int device, void* dst, const void* src, size_t n,
                         stream_handle s) override {
    return host_copy(device, dst, src, n, cudaMemcpyHostToDevice, s);
  }

  result<void> synchronize(int device, stream_handle s) override {
    if (auto ok = check(device, "cudaSetDevice", cudaSetDevice(device)); !ok) return ok;
    if (auto ok = check(device, "a kernel of the task",
                        cudaStreamSynchronize(static_cast<cudaStream_t>(s)));
        !ok)
      return ok;
    // An error of a launch on another stream (or the legacy one) is sticky as well.
    return check(device, "a kernel of the task", cudaGetLastError());
  }

  result<event_handle> record(int device, stream_handle s) override {
    if (auto ok = check(device, "cudaSetDevice", cudaSetDevice(device)); !ok)
      return ok.err();
    cudaEvent_t e = nullptr;
    if (auto ok = check(device, "cudaEventCreate",
                        cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        !ok)
      return ok.err();
    if (auto ok = check(device, "cudaEventRecord",
                        cudaEventRecord(e, static_cast<cudaStream_t>(s)));
        !ok) {
      cudaEventDestroy(e);
      return ok.err();
    }
    return static_cast<event_handle>(e);
  }

  bool done(int, event_handle e) noexcept override {
    return cudaEventQuery(static_cast<cudaEvent_t>(e)) != cudaErrorNotReady;
  }

  void wait(int, event_handle e) noexcept override {
    cudaEventSynchronize(static_cast<cudaEvent_t>(e));
  }

  void destroy_event(int device, event_handle e) noexcept override {
    if (cudaSetDevice(device) == cudaSuccess)
      cudaEventDestroy(static_cast<cudaEvent_t>(e));
  }

  std::string sharing_host() const override {
    auto id = boot_id();
    return id.empty() ? id : "cuda:" + id;
  }

  result<std::string> share(int device, void* p) override {
    if (auto ok = check(device, "cudaSetDevice", cudaSetDevice(device)); !ok)
      return ok.err();
    cudaIpcMemHandle_t h;
    if (auto ok = check(device, "cudaIpcGetMemHandle", cudaIpcGetMemHandle(&h, p)); !ok)
      return ok.err();
    return std::string(h.reserved, sizeof h.reserved);
  }

  result<void*> open_shared(int device, const std::string& handle, size_t) override {
    cudaIpcMemHandle_t h;
    if (handle.size() != sizeof h.reserved)
      return error{errc::invalid_argument,
                   "CUDA device " + std::to_string(device) + ": a CUDA IPC handle has " +
                       std::to_string(sizeof h.reserved) + " bytes, not " +
                       std::to_string(handle.size())};
    std::memcpy(h.reserved, handle.data(), sizeof h.reserved);
    if (auto ok = check(device, "cudaSetDevice", cudaSetDevice(device)); !ok)
      return ok.err();
    void* p = nullptr;
    auto e = cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess);
    if (e != cudaSuccess) {
      // Not a fault of this process's context (the sharer's memory, or a handle of this
      // very process): the reader pulls the bytes instead.
      cudaGetLastError();
      return cuda_error(errc::device_error, device, "cudaIpcOpenMemHandle", e);
    }
    return p;
  }

  void close_shared(int device, void* p) noexcept override {
    if (cudaSetDevice(device) == cudaSuccess && cudaIpcCloseMemHandle(p) != cudaSuccess)
      cudaGetLastError();
  }

private:
  result<void> host_copy(int device, void* dst, const void* src, size_t n,
                         cudaMemcpyKind kind, stream_handle s) {
    if (auto ok = check(device, "cudaSetDevice", cudaSetDevice(device)); !ok) return ok;
    auto stream = static_cast<cudaStream_t>(s);
    if (auto ok =
            check(device, "cudaMemcpyAsync", cudaMemcpyAsync(dst, src, n, kind, stream));
        !ok)
      return ok;
    return check(device, "cudaStreamSynchronize", cudaStreamSynchronize(stream));
  }

  std::vector<device_info> devices_;
};

} // namespace

std::unique_ptr<device_api> make_cuda_api() {
  auto devices = list_devices();
  if (devices.empty()) return nullptr;
  return std::make_unique<cuda_device_api>(std::move(devices));
}

#else

std::unique_ptr<device_api> make_cuda_api() {
  return nullptr;
}

#endif

} // namespace swarm::gpu
