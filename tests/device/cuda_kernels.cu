#include "tests/device/cuda_kernels.hpp"

#include <cuda_runtime.h>

namespace swarm::gpu_test {

namespace {

__global__ void fill(uint32_t* p, size_t n, uint32_t pattern, long long delay_cycles) {
  if (delay_cycles > 0 && blockIdx.x == 0 && threadIdx.x == 0) {
    long long start = clock64();
    while (clock64() - start < delay_cycles) {
    }
  }
  __syncthreads(); // a delayed fill runs as one block: every write waits
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    p[i] = pattern ^ static_cast<uint32_t>(i);
}

__global__ void write_to(int* p) {
  *p = 42;
}

__global__ void nothing() {}

std::string name_of(cudaError_t e) {
  return e == cudaSuccess ? std::string{} : std::string{cudaGetErrorName(e)};
}

} // namespace

std::string launch_fill(uint32_t* p, size_t n, uint32_t pattern, double delay_ms,
                        void* stream) {
  int device = 0, khz = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device);
  auto cycles = static_cast<long long>(delay_ms * khz);
  // One block when delayed, so the delay holds back every write.
  unsigned blocks = cycles > 0 ? 1u : static_cast<unsigned>((n + 255) / 256);
  fill<<<blocks == 0 ? 1 : blocks, 256, 0, static_cast<cudaStream_t>(stream)>>>(
      p, n, pattern, cycles);
  return name_of(cudaGetLastError());
}

std::string launch_illegal_address(void* stream) {
  write_to<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(
      reinterpret_cast<int*>(uintptr_t{0x10}));
  return name_of(cudaGetLastError());
}

std::string launch_bad_configuration(void* stream) {
  nothing<<<1, 4096, 0, static_cast<cudaStream_t>(stream)>>>();
  return name_of(cudaGetLastError());
}

void launch_bad_configuration_unchecked(void* stream) {
  nothing<<<1, 4096, 0, static_cast<cudaStream_t>(stream)>>>();
}

std::string wait_stream(void* stream) {
  return name_of(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
}

int current_device() {
  int device = -1;
  cudaGetDevice(&device);
  return device;
}

void memory_info(size_t& free, size_t& total) {
  free = total = 0;
  cudaMemGetInfo(&free, &total);
}

} // namespace swarm::gpu_test
