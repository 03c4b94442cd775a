#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>

namespace swarm::actors {

/// How long calls took, in fixed buckets from 10 us to 5 s: written by the one thread
/// that runs the calls, read by metric scrapes at any time.
class call_histogram {
public:
  /// The buckets' upper bounds, in seconds; one more bucket holds the rest.
  static constexpr std::array<double, 12> bounds = {1e-5, 5e-5, 1e-4, 5e-4, 1e-3, 5e-3,
                                                    1e-2, 5e-2, 0.1,  0.5,  1,    5};

  /// What was recorded so far, as counts per bucket (not cumulative).
  struct snapshot {
    std::array<uint64_t, bounds.size() + 1> counts{};
    uint64_t count = 0;
    double sum_seconds = 0;

    snapshot& operator+=(const snapshot& other);
  };

  void record(std::chrono::nanoseconds took) noexcept;
  snapshot read() const noexcept;

private:
  std::array<std::atomic<uint64_t>, bounds.size() + 1> counts_{};
  std::atomic<uint64_t> sum_ns_{0};
};

} // namespace swarm::actors
