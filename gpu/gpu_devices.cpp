#include "gpu/gpu_devices.hpp"

#ifdef SWARM_WITH_CUDA
#include <cuda_runtime_api.h>
#include <hwloc.h>
#include <hwloc/cudart.h>
#endif

namespace swarm::gpu {

#ifdef SWARM_WITH_CUDA
namespace {

// The NUMA node whose memory is nearest device `dev`: the one below the smallest
// object covering the CPUs local to its PCI slot.
int numa_of(hwloc_topology_t topo, int dev) {
  int numa = -1;
  hwloc_cpuset_t set = hwloc_bitmap_alloc();
  if (set && hwloc_cudart_get_device_cpuset(topo, dev, set) == 0 &&
      !hwloc_bitmap_iszero(set)) {
    auto obj = hwloc_get_obj_covering_cpuset(topo, set);
    while (obj && obj->memory_arity == 0)
      obj = obj->parent;
    if (obj && obj->memory_first_child)
      numa = static_cast<int>(obj->memory_first_child->os_index);
  }
  hwloc_bitmap_free(set);
  return numa;
}

} // namespace
#endif

std::vector<device_info> list_devices() {
  std::vector<device_info> out;
#ifdef SWARM_WITH_CUDA
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count <= 0) return out;
  hwloc_topology_t topo = nullptr;
  if (hwloc_topology_init(&topo) != 0 || hwloc_topology_load(topo) != 0) {
    if (topo) hwloc_topology_destroy(topo);
    topo = nullptr;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    out.push_back({i, prop.name, prop.totalGlobalMem, topo ? numa_of(topo, i) : -1});
  }
  if (topo) hwloc_topology_destroy(topo);
#endif
  return out;
}

bool built_with_cuda() {
#ifdef SWARM_WITH_CUDA
  return true;
#else
  return false;
#endif
}

} // namespace swarm::gpu
