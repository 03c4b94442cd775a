// Bare CUDA floors of the GPU benchmark (`swarm bench --filter gpu`): what the same
// work costs without Swarm, measured in the same run. Plain C++ functions in front, so
// that the benchmark itself builds without nvcc's view of Swarm's headers.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <vector>

#include "tools/bench_gpu_floors.hpp"

namespace swarm::tools {

namespace {

__global__ void empty_kernel() {}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Median GB/s of `reps` copies of `bytes` from `src` on `src_dev` to device `dst_dev`.
double copy_gbps(int dst_dev, int src_dev, size_t bytes, int reps) {
  void* src = nullptr;
  void* dst = nullptr;
  cudaStream_t s = nullptr;
  bool ok =
      cudaSetDevice(src_dev) == cudaSuccess && cudaMalloc(&src, bytes) == cudaSuccess &&
      cudaSetDevice(dst_dev) == cudaSuccess && cudaMalloc(&dst, bytes) == cudaSuccess &&
      cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess;
  if (ok && dst_dev != src_dev) {
    auto e = cudaDeviceEnablePeerAccess(src_dev, 0);
    if (e == cudaErrorPeerAccessAlreadyEnabled) cudaGetLastError();
  }
  std::vector<double> gbps;
  for (int r = 0; ok && r <= reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    auto e = dst_dev == src_dev
                 ? cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s)
                 : cudaMemcpyPeerAsync(dst, dst_dev, src, src_dev, bytes, s);
    ok = e == cudaSuccess && cudaStreamSynchronize(s) == cudaSuccess;
    if (r > 0) gbps.push_back(static_cast<double>(bytes) / seconds_since(t0) / 1e9);
  }
  if (s) cudaStreamDestroy(s);
  cudaFree(dst);
  cudaSetDevice(src_dev);
  cudaFree(src);
  return ok ? median_of(gbps) : -1;
}

} // namespace

double bare_copy_gbps(int dst_device, int src_device, size_t bytes, int reps) {
  return copy_gbps(dst_device, src_device, bytes, reps);
}

double bare_launch_us(int device, int reps) {
  cudaStream_t s = nullptr;
  if (cudaSetDevice(device) != cudaSuccess ||
      cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
    return -1;
  std::vector<double> us;
  bool ok = true;
  for (int r = 0; ok && r <= reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    empty_kernel<<<1, 1, 0, s>>>();
    ok = cudaGetLastError() == cudaSuccess && cudaStreamSynchronize(s) == cudaSuccess;
    if (r > 0) us.push_back(seconds_since(t0) * 1e6);
  }
  cudaStreamDestroy(s);
  return ok ? median_of(us) : -1;
}

namespace {

// Median GB/s of `reps` round trips of `bytes` through the host memory `host(r)` gives
// for trip r (timed with it): device to host, then host to device, each waited for.
double round_trip_gbps(int device, size_t bytes, int reps,
                       const std::function<void*(int)>& host) {
  void* dev = nullptr;
  cudaStream_t s = nullptr;
  bool ok = cudaSetDevice(device) == cudaSuccess && cudaMalloc(&dev, bytes) == cudaSuccess &&
            cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess;
  std::vector<double> gbps;
  for (int r = 0; ok && r <= reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    void* h = host(r);
    ok = h && cudaMemcpyAsync(h, dev, bytes, cudaMemcpyDeviceToHost, s) == cudaSuccess &&
         cudaStreamSynchronize(s) == cudaSuccess &&
         cudaMemcpyAsync(dev, h, bytes, cudaMemcpyHostToDevice, s) == cudaSuccess &&
         cudaStreamSynchronize(s) == cudaSuccess;
    if (r > 0) gbps.push_back(static_cast<double>(bytes) / seconds_since(t0) / 1e9);
  }
  if (s) cudaStreamDestroy(s);
  cudaFree(dev);
  return ok ? median_of(gbps) : -1;
}

} // namespace

double bare_pinned_round_trip_gbps(int device, size_t bytes, int reps) {
  void* pinned = nullptr;
  if (cudaSetDevice(device) != cudaSuccess ||
      cudaHostAlloc(&pinned, bytes, cudaHostAllocDefault) != cudaSuccess)
    return -1;
  auto gbps = round_trip_gbps(device, bytes, reps, [&](int) { return pinned; });
  cudaFreeHost(pinned);
  return gbps;
}

double bare_pageable_round_trip_gbps(int device, size_t bytes, int reps, bool fresh) {
  std::vector<unsigned char> host(bytes, 1); // touched: its pages exist
  return round_trip_gbps(device, bytes, reps, [&](int) -> void* {
    // A new zeroed vector for each trip, as `device_buffer::to_host` makes one: what the
    // system charges for fresh pages comes in.
    if (fresh) std::vector<unsigned char>(bytes).swap(host);
    return host.data();
  });
}

bool launch_empty_kernel(void* stream) {
  empty_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>();
  return cudaGetLastError() == cudaSuccess;
}

} // namespace swarm::tools
