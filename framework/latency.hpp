#pragma once

/// Measuring the latency of a call the way `swarm bench` does: time each call, then
/// summarize the distribution.

#include <chrono>
#include <cstddef>
#include <functional>
#include <vector>

namespace swarm {

/// A latency distribution; every time is in microseconds.
struct latency_stats {
  /// How many calls were timed.
  size_t count = 0;
  double p50 = 0; ///< the median
  double p90 = 0; ///< the 90th percentile
  double p99 = 0; ///< the 99th percentile
  /// The 99.9th percentile.
  double p999 = 0;
  double max = 0;  ///< the slowest call
  double mean = 0; ///< the average
};

/// How `measure_latency` times a call.
struct latency_options {
  /// Untimed calls made first (connections, caches, allocators warm up).
  size_t warmup = 100;
  /// Timed calls, at most.
  size_t iterations = 10'000;
  /// Timed calls stop once this much time has passed, even before `iterations`.
  std::chrono::milliseconds time_cap{2'000};
};

/// Summarizes `samples_us` (one time per call, in µs). Percentiles are nearest-rank: p99
/// is the smallest sample that at least 99% of the samples do not exceed. An empty input
/// gives all zeros.
latency_stats summarize_latency(std::vector<double> samples_us);

/// Calls `call` `opts.warmup` times untimed, then times up to `opts.iterations` calls one
/// after another (stopping early at `opts.time_cap`) and summarizes them. `call` should
/// return only once the call it measures is complete, e.g.
/// `[&] { h.call(&my_actor::ping, 1).get().value(); }`. An exception from `call`
/// propagates. Throws `std::invalid_argument` when `opts.iterations` is 0.
latency_stats measure_latency(const std::function<void()>& call,
                              const latency_options& opts = {});

} // namespace swarm
