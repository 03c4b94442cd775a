#pragma once

// What the CUDA device tests run, in their own process and on node processes they start
// (`cuda_device_tests --serve`).

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "framework/swarm.hpp"
#include "tests/device/cuda_kernels.hpp"

namespace swarm::gpu_test {

/// Words of `words` that do not read pattern ^ index.
inline size_t wrong_words(const std::vector<uint32_t>& words, uint32_t pattern) {
  size_t wrong = 0;
  for (size_t i = 0; i < words.size(); ++i)
    wrong += words[i] != (pattern ^ static_cast<uint32_t>(i));
  return wrong;
}

/// Throws when a launch failed.
inline void must_launch(const std::string& launch_error) {
  if (!launch_error.empty())
    throw std::runtime_error{"kernel launch failed: " + launch_error};
}

/// A device buffer of `words` words filled by a kernel with `pattern`.
inline device_buffer dev_fill(context& ctx, uint64_t words, uint32_t pattern) {
  auto b = ctx.device_alloc(words * 4).value();
  must_launch(launch_fill(b.data_as<uint32_t>(), words, pattern, 0, ctx.gpu_stream()));
  return b;
}

/// Where a buffer was read: the node, whether it arrived on a device there, the device
/// its bytes were written to as they came as bytes (-1: none), and how many of its words
/// were wrong.
struct dev_seen {
  std::string node;
  bool arrived_on_device = false;
  int landed = -1;
  uint64_t wrong = 0;
};

template <class Inspector> bool inspect(Inspector& f, dev_seen& s) {
  return f(s.node, s.arrived_on_device, s.landed, s.wrong);
}

/// Reads `b` on a device of this node and checks it against `pattern`.
inline dev_seen dev_check(context& ctx, device_buffer b, uint32_t pattern) {
  auto landed = b.landed_device();
  auto here = ctx.on_device(b).value();
  return {ctx.node_name(), b.on_device(), landed,
          wrong_words(here.to_host_as<uint32_t>().value(), pattern)};
}

/// Launches a kernel that writes to an unmapped address.
inline int dev_fault(context& ctx) {
  must_launch(launch_illegal_address(ctx.gpu_stream()));
  return 0;
}

inline void register_device_functions(application& app) {
  app.function("dev_fill", dev_fill);
  app.function("dev_check", dev_check);
  app.function("dev_fault", dev_fault);
}

} // namespace swarm::gpu_test
