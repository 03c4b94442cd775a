// The CUDA device tests (tests/device/): built where nvcc is found. Without a CUDA device
// the binary reports itself skipped (exit code 77) before any case runs;
// `scripts/gpu_check.sh` runs it on a GPU machine. `--serve --config FILE --node NAME`
// serves a node of a cluster with the tests' functions, for the cases that start node
// processes.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "framework/swarm.hpp"
#include "tests/device/cuda_kernels.hpp"
#include "tests/device/device_app.hpp"

int main(int argc, char** argv) {
  if (argc == 6 && std::string{argv[1]} == "--serve") {
    auto cfg = swarm::load_cluster_config(argv[3]);
    if (!cfg) {
      std::fprintf(stderr, "swarm: %s\n", cfg.err().message.c_str());
      return 1;
    }
    swarm::application app;
    swarm::gpu_test::register_device_functions(app);
    return swarm::serve(app, *cfg, argv[5]);
  }
  bool listing = false;
  for (int i = 1; i < argc; ++i)
    listing = listing || std::string{argv[i]}.rfind("--list", 0) == 0 ||
              std::string{argv[i]}.rfind("-ltc", 0) == 0;
  size_t free = 0, total = 0;
  swarm::gpu_test::memory_info(free, total);
  if (total == 0 && !listing) {
    std::printf("skipped: this machine has no CUDA device\n");
    return 77;
  }
  doctest::Context ctx(argc, argv);
  return ctx.run();
}
