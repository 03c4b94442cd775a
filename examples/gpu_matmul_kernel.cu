// The kernel of the GPU example, behind a plain C++ function.
#include <cuda_runtime.h>

namespace {

// c = a * b for n x n row-major matrices, one thread per element of c.
__global__ void multiply(const float* a, const float* b, float* c, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= n || col >= n) return;
  float sum = 0;
  for (int k = 0; k < n; ++k)
    sum += a[row * n + k] * b[k * n + col];
  c[row * n + col] = sum;
}

} // namespace

// Queues c = a * b on `stream` (a cudaStream_t); false when the launch failed.
bool launch_multiply(const float* a, const float* b, float* c, int n, void* stream) {
  dim3 block{16, 16};
  dim3 grid{(n + 15u) / 16u, (n + 15u) / 16u};
  multiply<<<grid, block, 0, static_cast<cudaStream_t>(stream)>>>(a, b, c, n);
  return cudaGetLastError() == cudaSuccess;
}
