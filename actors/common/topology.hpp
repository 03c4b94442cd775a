#pragma once

#include <cstddef>

namespace swarm::actors {

/// The machine as hwloc sees it; owned by the node, read-only after construction.
class topology {
public:
  topology();
  ~topology();
  topology(const topology&) = delete;
  topology& operator=(const topology&) = delete;

  /// Physical cores (processing units when cores are not reported).
  size_t cores() const noexcept { return cores_; }

  /// Installed memory in bytes.
  size_t memory_bytes() const noexcept { return memory_; }

  /// Binds the calling thread to core `index % cores()`; returns whether it worked.
  bool pin_current_thread(size_t index) const;

private:
  void* topo_ = nullptr; // hwloc_topology_t, kept out of this header
  size_t cores_ = 1;
  size_t memory_ = 0;
};

} // namespace swarm::actors
