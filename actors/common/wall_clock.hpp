#pragma once

#include <chrono>
#include <cstdint>

namespace swarm::actors {

/// Milliseconds since the Unix epoch: what control-store rows and chain epochs record.
inline uint64_t wall_ms() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

} // namespace swarm::actors
