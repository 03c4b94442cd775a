#include "framework/latency.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace swarm {

namespace {

// `sorted` is not empty.
double nearest_rank(const std::vector<double>& sorted, double p) {
  auto rank = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

} // namespace

latency_stats summarize_latency(std::vector<double> samples_us) {
  if (samples_us.empty()) return {};
  std::sort(samples_us.begin(), samples_us.end());
  double sum = std::accumulate(samples_us.begin(), samples_us.end(), 0.0);
  return {samples_us.size(),
          nearest_rank(samples_us, 0.50),
          nearest_rank(samples_us, 0.90),
          nearest_rank(samples_us, 0.99),
          nearest_rank(samples_us, 0.999),
          samples_us.back(),
          sum / static_cast<double>(samples_us.size())};
}

latency_stats measure_latency(const std::function<void()>& call,
                              const latency_options& opts) {
  if (opts.iterations == 0)
    throw std::invalid_argument("measure_latency: iterations must be at least 1");
  using clock = std::chrono::steady_clock;
  for (size_t i = 0; i < opts.warmup; ++i)
    call();
  std::vector<double> us;
  us.reserve(opts.iterations);
  auto t0 = clock::now();
  for (size_t i = 0; i < opts.iterations; ++i) {
    auto start = clock::now();
    call();
    auto end = clock::now();
    us.push_back(std::chrono::duration<double, std::micro>(end - start).count());
    if (end - t0 >= opts.time_cap) break;
  }
  return summarize_latency(std::move(us));
}

} // namespace swarm
