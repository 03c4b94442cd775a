#include "gpu/gpu_devices.hpp"

#include <fstream>

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

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints it.
std::string uuid_of(const cudaUUID_t& id) {
  static const char* hex = "0123456789abcdef";
  std::string out = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    auto b = static_cast<unsigned char>(id.bytes[i]);
    out += hex[b >> 4];
    out += hex[b & 15];
  }
  return out;
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
    if (auto e = cudaGetDeviceProperties(&prop, i); e != cudaSuccess) {
      // Kept in its place, so that a device's index stays its CUDA ordinal: opening it
      // fails, and its worker reports it lost.
      cudaGetLastError();
      out.push_back(
          {i, std::string{"unreadable device ("} + cudaGetErrorName(e) + ")", 0, -1, ""});
      continue;
    }
    out.push_back({i, prop.name, prop.totalGlobalMem, topo ? numa_of(topo, i) : -1,
                   uuid_of(prop.uuid)});
  }
  if (topo) hwloc_topology_destroy(topo);
#endif
  return out;
}

std::string boot_id() {
  std::ifstream in{"/proc/sys/kernel/random/boot_id"};
  std::string id;
  std::getline(in, id);
  return id;
}

bool built_with_cuda() {
#ifdef SWARM_WITH_CUDA
  return true;
#else
  return false;
#endif
}

} // namespace swarm::gpu
