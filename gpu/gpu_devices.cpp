#include "gpu/gpu_devices.hpp"

#ifdef SWARM_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace swarm::gpu {

std::vector<device_info> list_devices() {
  std::vector<device_info> out;
#ifdef SWARM_WITH_CUDA
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return out;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    out.push_back({i, prop.name, prop.totalGlobalMem});
  }
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
