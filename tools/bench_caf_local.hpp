#pragma once

// In-process floors measured with bare CAF; the only bench file besides bench_floors.cpp
// that includes CAF.

#include <chrono>
#include <cstddef>
#include <memory>
#include <vector>

#include "framework/latency.hpp"

namespace swarm::tools {

/// A bare CAF system with the scheduler settings Swarm uses (`sharing`, max(2, cores)
/// threads), an event-based actor that replies with its argument (an int or a byte
/// vector), and a blocking caller: the floors of in-process actor calls.
class caf_local_floor {
public:
  caf_local_floor();
  ~caf_local_floor();
  caf_local_floor(const caf_local_floor&) = delete;
  caf_local_floor& operator=(const caf_local_floor&) = delete;

  /// Up to `n` sequential blocking requests with an int; the round trip of each in µs.
  std::vector<double> round_trips(size_t n, std::chrono::milliseconds cap);

  /// Up to `n` messages (an int, or a vector of `payload_bytes` bytes when not 0) sent at
  /// once, then every reply received; messages per second.
  double pipelined(size_t n, std::chrono::milliseconds cap, size_t payload_bytes = 0);

  /// Sequential blocking requests carrying `bytes` bytes, echoed back.
  latency_stats payload_latency(size_t bytes, const latency_options& opts);

  /// Up to `n` actors spawned, each answering one request before the next is spawned;
  /// actors per second.
  double spawn_rate(size_t n, std::chrono::milliseconds cap);

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace swarm::tools
