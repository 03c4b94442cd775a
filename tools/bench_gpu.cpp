// GPU workloads (`swarm bench --filter gpu`): a device buffer handed from one GPU task to
// the next, on one device, between two, and between two node processes sharing a device
// (mapped by CUDA IPC, and through the host with sharing off), beside a bare cudaMemcpy
// of the same bytes; and an empty GPU task beside a bare kernel launch. Skipped, saying
// why, where there is no CUDA device or Swarm was built without nvcc.

#include <unistd.h>

#include <string>
#include <vector>

#include "framework/swarm.hpp"
#include "tools/bench_cluster.hpp"
#include "tools/bench_local.hpp"
#include "tools/bench_stats.hpp"

#ifdef SWARM_BENCH_GPU
#include "tools/bench_gpu_floors.hpp"
#endif

namespace swarm::tools {

#ifdef SWARM_BENCH_GPU

namespace {

task_options on_gpus(double g, const std::string& node = "") {
  task_options o;
  o.resources.set("GPU", g);
  o.node = node;
  return o;
}

// Median GB/s of handing a `bytes` buffer made on device 0 (of node `from`) to a task
// that takes it on device `to` (0: nothing moves; 1: a peer copy) of node `at`: the
// consumer task from submit to done.
double handoff_gbps(runtime& rt, const bench_fns& fns, size_t bytes, int to, int reps,
                    const std::string& from = "", const std::string& at = "") {
  std::vector<double> gbps;
  double gpus = to == 0 ? 1 : 2;
  for (int r = 0; r <= reps; ++r) {
    auto buf = rt.submit(on_gpus(gpus, from), fns.gpu_make, uint64_t{bytes});
    check(buf.get().has_value(), "making a device buffer");
    auto t0 = bench_clock::now();
    auto where = rt.submit(on_gpus(gpus, at), fns.gpu_take, buf, to).get();
    double s = seconds_since(t0);
    check(where.has_value(), "taking a device buffer");
    if (r > 0) gbps.push_back(static_cast<double>(bytes) / s / 1e9);
  }
  return median(std::move(gbps));
}

} // namespace

void measure_gpu(bench_session& s) {
  bool same = s.wants("gpu_handoff_same_device"), peer = s.wants("gpu_handoff_peer"),
       empty = s.wants("gpu_empty_task"), staging = s.wants("gpu_host_staging"),
       ipc = s.wants("gpu_ipc_handoff");
  if (!same && !peer && !empty && !staging && !ipc) return;
  application app;
  auto fns = register_bench(app);
  auto& make = fns.gpu_make;
  auto plain = app.function("bench_gpu_plain", [] { return 0; });
  auto nothing = app.function("bench_gpu_empty", [](context& ctx) {
    if (!launch_empty_kernel(ctx.gpu_stream())) throw std::runtime_error{"launch failed"};
    return 0;
  });
  // A device buffer to the host and back, as bytes leaving and entering a node go.
  auto stage = app.function("bench_gpu_stage", [](context& ctx, device_buffer b) {
    auto bytes = b.to_host().value();
    return ctx.to_device(bytes.data(), bytes.size()).value().size();
  });
  runtime rt{app};
  if (std::string{rt.gpu_backend()} != "cuda") {
    s.skip("gpu", "this machine has no CUDA device");
    return;
  }
  auto devices = static_cast<int>(rt.total_resources().get("GPU"));
  auto& p = s.plan();
  size_t bytes = p.big_ops >= 8 ? size_t{256} << 20 : size_t{64} << 20;
  int reps = p.reps * 4;
  double d2d = 0;
  if (same || ipc)
    d2d = s.floor("cuda_memcpy_d2d_gigabytes", "GB/s",
                  [&] { return bare_copy_gbps(0, 0, bytes, reps); });
  if (same)
    s.add({"gpu_handoff_same_device_gigabytes", handoff_gbps(rt, fns, bytes, 0, reps),
           "GB/s", "cuda_memcpy_d2d_gigabytes", d2d, goal::ratio_at_least, 0.9,
           ">= 0.9x cudaMemcpy"});
  if (ipc) {
    // Two node processes on the device (and the head here): made on n2, taken on n3.
    auto between = [&](const std::string& keys) {
      char tmpl[] = "/tmp/swarm-bench-gpu-XXXXXX";
      cluster_nodes c{::mkdtemp(tmpl), 3, keys};
      return handoff_gbps(*c.rt, c.fns, bytes, 0, reps, "n2", "n3");
    };
    s.add(versus("gpu_ipc_handoff_gigabytes", between(""), "GB/s",
                 "cuda_memcpy_d2d_gigabytes", d2d));
    s.floor("gpu_host_path_handoff_gigabytes", "GB/s",
            [&] { return between("gpu_sharing = false\n"); });
  }
  if (peer && devices < 2)
    s.skip("gpu_handoff_peer", "one CUDA device: no peer to hand to");
  else if (peer) {
    double floor = s.floor("cuda_memcpy_peer_gigabytes", "GB/s",
                           [&] { return bare_copy_gbps(1, 0, bytes, reps); });
    s.add({"gpu_handoff_peer_gigabytes", handoff_gbps(rt, fns, bytes, 1, reps), "GB/s",
           "cuda_memcpy_peer_gigabytes", floor, goal::ratio_at_least, 0.9,
           ">= 0.9x cudaMemcpyPeer"});
  }
  if (empty) {
    size_t n = p.rtt_calls;
    double floor = s.floor("cuda_empty_launch_us", "us",
                           [&] { return bare_launch_us(0, static_cast<int>(n)); });
    auto task_us = median_of_reps(p.reps, n, [&](size_t k) {
      std::vector<double> us;
      for (size_t i = 0; i < k; ++i) {
        auto t0 = bench_clock::now();
        check(rt.submit(on_gpus(1), nothing).get().has_value(), "an empty GPU task");
        us.push_back(seconds_since(t0) * 1e6);
      }
      return median(std::move(us));
    });
    s.add(versus("gpu_empty_task_us", task_us, "us", "cuda_empty_launch_us", floor));
    // What any task costs, submit to result, in the same runtime: the part of the
    // difference above that is not the GPU's.
    s.floor("gpu_bench_plain_task_us", "us", [&] {
      return median_of_reps(p.reps, n, [&](size_t k) {
        std::vector<double> us;
        for (size_t i = 0; i < k; ++i) {
          auto t0 = bench_clock::now();
          check(rt.submit(plain).get().has_value(), "an empty task");
          us.push_back(seconds_since(t0) * 1e6);
        }
        return median(std::move(us));
      });
    });
    s.add({"gpu_empty_task_over_launch_us", task_us - floor, "us", "", 0, goal::at_most,
           20, "<= 20 us"});
  }
  if (staging) {
    double floor = s.floor("cuda_memcpy_pinned_round_trip_gigabytes", "GB/s",
                           [&] { return bare_pinned_round_trip_gbps(0, bytes, reps); });
    std::vector<double> gbps;
    for (int r = 0; r <= reps; ++r) {
      auto buf = rt.submit(on_gpus(1), make, uint64_t{bytes});
      check(buf.get().has_value(), "making a device buffer");
      auto t0 = bench_clock::now();
      check(rt.submit(on_gpus(1), stage, buf).get().has_value(),
            "staging through the host");
      if (r > 0) gbps.push_back(static_cast<double>(bytes) / seconds_since(t0) / 1e9);
    }
    s.add({"gpu_host_staging_gigabytes", median(std::move(gbps)), "GB/s",
           "cuda_memcpy_pinned_round_trip_gigabytes", floor, goal::ratio_at_least, 0.8,
           ">= 0.8x pinned cudaMemcpy"});
    // Where a plain vector's copy stands between the two, and one into fresh memory.
    s.floor("cuda_memcpy_pageable_round_trip_gigabytes", "GB/s",
            [&] { return bare_pageable_round_trip_gbps(0, bytes, reps, false); });
    s.floor("cuda_memcpy_fresh_vector_round_trip_gigabytes", "GB/s",
            [&] { return bare_pageable_round_trip_gbps(0, bytes, reps, true); });
  }
}

#else

void measure_gpu(bench_session& s) {
  if (s.wants("gpu_handoff_same_device") || s.wants("gpu_handoff_peer") ||
      s.wants("gpu_empty_task") || s.wants("gpu_host_staging") ||
      s.wants("gpu_ipc_handoff"))
    s.skip("gpu", "this swarm was built without nvcc (no CUDA kernels)");
}

#endif

} // namespace swarm::tools
