// A GPU pipeline: two GPU tasks multiply matrices in turn, (A * B) * C, and the product
// of the first stays on the device for the second: only the inputs go up and only the
// result comes down. Without a CUDA device it reports itself skipped (exit code 77).
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "framework/swarm.hpp"

// From gpu_matmul_kernel.cu: queues c = a * b on `stream`.
bool launch_multiply(const float* a, const float* b, float* c, int n, void* stream);

namespace {

constexpr int n = 256;

std::vector<float> random_matrix(unsigned seed) {
  std::mt19937 gen{seed};
  std::uniform_real_distribution<float> d{-1, 1};
  std::vector<float> m(n * n);
  for (auto& x : m)
    x = d(gen);
  return m;
}

std::vector<float> multiply_on_host(const std::vector<float>& a,
                                    const std::vector<float>& b) {
  std::vector<float> c(n * n, 0);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j)
        c[i * n + j] += a[i * n + k] * b[k * n + j];
  return c;
}

} // namespace

int main() {
  swarm::application app;
  // Host matrix -> device buffer.
  auto upload = app.function("upload", [](swarm::context& ctx, std::vector<float> m) {
    return ctx.to_device(m).value();
  });
  // Device buffers in, device buffer out: nothing leaves the device.
  auto multiply = app.function("multiply", [](swarm::context& ctx, swarm::device_buffer a,
                                              swarm::device_buffer b) {
    auto x = ctx.on_device(a).value(); // the same buffer when it is on this device
    auto y = ctx.on_device(b).value();
    auto c = ctx.device_alloc(x.size()).value();
    if (!launch_multiply(x.data_as<float>(), y.data_as<float>(), c.data_as<float>(), n,
                         ctx.gpu_stream()))
      throw std::runtime_error{"the multiply kernel did not launch"};
    return c; // ready once the kernel is done: the runtime waits for the stream
  });

  swarm::runtime rt{app};
  if (std::string{rt.gpu_backend()} != "cuda") {
    std::printf("skipped: this machine has no CUDA device\n");
    return 77;
  }
  swarm::task_options gpu;
  gpu.resources.set("GPU", 1);

  auto a = random_matrix(1), b = random_matrix(2), c = random_matrix(3);
  auto ab =
      rt.submit(gpu, multiply, rt.submit(gpu, upload, a), rt.submit(gpu, upload, b));
  auto abc = rt.submit(gpu, multiply, ab, rt.submit(gpu, upload, c));
  auto product = abc.get().value().to_host_as<float>().value();

  auto expected = multiply_on_host(multiply_on_host(a, b), c);
  double worst = 0;
  for (size_t i = 0; i < expected.size(); ++i)
    worst = std::max(worst, std::fabs(double(product[i]) - expected[i]) /
                                (1 + std::fabs(double(expected[i]))));
  std::printf("(A * B) * C of %dx%d matrices on the GPU: largest relative error %.2e\n",
              n, n, worst);
  return worst < 1e-3 ? 0 : 1;
}
