#pragma once

#include <cstddef>

namespace swarm::tools {

// Built from bench_gpu_floors.cu where nvcc is found. Each returns -1 when CUDA failed.

/// Median GB/s of `reps` bare copies of `bytes` from device `src_device` to `dst_device`
/// (cudaMemcpyAsync within a device, cudaMemcpyPeerAsync between two), each waited for.
double bare_copy_gbps(int dst_device, int src_device, size_t bytes, int reps);

/// Median µs of `reps` launches of an empty kernel on a stream of `device`, each waited
/// for.
double bare_launch_us(int device, int reps);

/// Median GB/s of `reps` round trips of `bytes` through pinned host memory: a
/// `cudaMemcpyAsync` device to host, then host to device, each waited for.
double bare_pinned_round_trip_gbps(int device, size_t bytes, int reps);
/// The same through ordinary (pageable) host memory: one vector whose pages exist, or
/// (`fresh`) a new zeroed vector for each trip.
double bare_pageable_round_trip_gbps(int device, size_t bytes, int reps, bool fresh);

/// Launches an empty kernel on `stream` (a cudaStream_t).
bool launch_empty_kernel(void* stream);

} // namespace swarm::tools
