#include "tools/bench_stats.hpp"

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>

namespace swarm::tools {

double seconds_since(bench_clock::time_point t0) {
  return std::chrono::duration<double>(bench_clock::now() - t0).count();
}

double median(std::vector<double> xs) {
  if (xs.empty()) return 0;
  std::sort(xs.begin(), xs.end());
  auto n = xs.size();
  return n % 2 == 1 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

latency_stats median_stats(const std::vector<latency_stats>& xs) {
  auto field = [&](double latency_stats::*f) {
    std::vector<double> v;
    for (auto& x : xs)
      v.push_back(x.*f);
    return median(std::move(v));
  };
  std::vector<double> counts;
  for (auto& x : xs)
    counts.push_back(static_cast<double>(x.count));
  return {static_cast<size_t>(median(std::move(counts))),
          field(&latency_stats::p50),
          field(&latency_stats::p90),
          field(&latency_stats::p99),
          field(&latency_stats::p999),
          field(&latency_stats::max),
          field(&latency_stats::mean)};
}

double median_of_reps(int reps, size_t n, const std::function<double(size_t)>& rep) {
  rep(std::max<size_t>(1, n / 4));
  std::vector<double> xs;
  for (int i = 0; i < reps; ++i)
    xs.push_back(rep(n));
  return median(std::move(xs));
}

bool past_cap(size_t i, bench_clock::time_point t0, std::chrono::milliseconds cap) {
  return (i & 63) == 63 && bench_clock::now() - t0 > cap;
}

double parallel_rate(size_t callers, const std::function<size_t()>& body) {
  std::atomic<bool> go{false};
  std::atomic<size_t> total{0};
  std::vector<std::thread> threads;
  for (size_t c = 0; c < callers; ++c)
    threads.emplace_back([&] {
      while (!go.load())
        std::this_thread::yield();
      total += body();
    });
  auto t0 = bench_clock::now();
  go = true;
  for (auto& t : threads)
    t.join();
  return static_cast<double>(total.load()) / seconds_since(t0);
}

void check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string{"wrong result in "} + what);
}

} // namespace swarm::tools
