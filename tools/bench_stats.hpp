#pragma once

// Timing helpers shared by the parts of `swarm bench`.

#include <chrono>
#include <cstddef>
#include <functional>
#include <vector>

#include "framework/latency.hpp"

namespace swarm::tools {

using bench_clock = std::chrono::steady_clock;

double seconds_since(bench_clock::time_point t0);

/// The median; 0 for no values.
double median(std::vector<double> xs);

/// Each field the median of that field over `xs`.
latency_stats median_stats(const std::vector<latency_stats>& xs);

/// Runs `rep(n)` once as a warm-up with a quarter of the operations, then `reps` times,
/// and returns the median of what the measured runs returned.
double median_of_reps(int reps, size_t n, const std::function<double(size_t)>& rep);

/// Whether a loop that started at `t0` has run past `cap`; checked every 64 operations.
bool past_cap(size_t i, bench_clock::time_point t0, std::chrono::milliseconds cap);

/// Runs `body` on `callers` threads started together; the rate of the operations they
/// report (each returns its count), from the start signal to the last join.
double parallel_rate(size_t callers, const std::function<size_t()>& body);

/// Throws std::runtime_error naming `what` unless `ok`: a benchmark whose work gave the
/// wrong answer measured nothing.
void check(bool ok, const char* what);

} // namespace swarm::tools
