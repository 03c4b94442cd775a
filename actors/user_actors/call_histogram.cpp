#include "actors/user_actors/call_histogram.hpp"

namespace swarm::actors {

namespace {

constexpr std::array<int64_t, call_histogram::bounds.size()> bounds_ns() {
  std::array<int64_t, call_histogram::bounds.size()> out{};
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<int64_t>(call_histogram::bounds[i] * 1e9);
  return out;
}

constexpr auto upper_ns = bounds_ns();

} // namespace

void call_histogram::record(std::chrono::nanoseconds took) noexcept {
  auto ns = took.count();
  size_t i = 0;
  while (i < upper_ns.size() && ns > upper_ns[i])
    ++i;
  // One writer: relaxed is enough, a scrape may see a call's count before its sum.
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  sum_ns_.fetch_add(static_cast<uint64_t>(ns > 0 ? ns : 0), std::memory_order_relaxed);
}

call_histogram::snapshot call_histogram::read() const noexcept {
  snapshot out;
  for (size_t i = 0; i < counts_.size(); ++i) {
    out.counts[i] = counts_[i].load(std::memory_order_relaxed);
    out.count += out.counts[i];
  }
  out.sum_seconds = static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) / 1e9;
  return out;
}

call_histogram::snapshot& call_histogram::snapshot::operator+=(const snapshot& other) {
  for (size_t i = 0; i < counts.size(); ++i)
    counts[i] += other.counts[i];
  count += other.count;
  sum_seconds += other.sum_seconds;
  return *this;
}

} // namespace swarm::actors
