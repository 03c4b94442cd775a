#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace swarm::gpu {

/// One GPU as the CUDA runtime reports it.
struct device_info {
  int index = 0;
  std::string name;
  size_t memory_bytes = 0;
  /// The NUMA node nearest to it (hwloc, from its PCI slot's local CPUs); -1 unknown.
  int numa_node = -1;
  /// Its identity, as `nvidia-smi -L` prints it ("GPU-" and 32 hex digits): stays the
  /// same whatever `CUDA_VISIBLE_DEVICES` makes its index.
  std::string uuid;
};

/// The GPUs this process can use; empty without the CUDA toolkit at build time, without
/// a driver, or without devices (the CUDA runtime's error then means "none").
std::vector<device_info> list_devices();

/// This boot of this machine (the kernel's boot id): the same for every process on it.
std::string boot_id();

/// Whether this build can drive GPUs at all.
bool built_with_cuda();

} // namespace swarm::gpu
