// Swarm's GPU path on a real CUDA device, in one process: the `cuda` backend, real
// kernels, real faults.

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "framework/swarm.hpp"
#include "tests/device/cuda_kernels.hpp"
#include "tests/device/device_app.hpp"

using namespace std::chrono_literals;
using swarm::gpu_test::launch_fill;
using swarm::gpu_test::must_launch;
using swarm::gpu_test::wrong_words;

namespace {

swarm::runtime_config cuda_node() {
  swarm::runtime_config cfg;
  cfg.cpus = 8;
  cfg.gpu_backend = "cuda";
  return cfg;
}

swarm::task_options gpu(double g) {
  swarm::task_options o;
  o.resources.set("GPU", g);
  return o;
}

// Waits, bounded, for `flag`; false when it never came.
bool wait_for(const std::atomic<bool>& flag, std::chrono::milliseconds bound) {
  auto until = std::chrono::steady_clock::now() + bound;
  while (!flag.load()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

} // namespace

TEST_CASE("the cuda backend runs a GPU task with its device current and reports the "
          "device's memory as the driver does") {
  swarm::application app;
  auto where = app.function("where", [](swarm::context& ctx) {
    return std::vector<int>{swarm::gpu_test::current_device(),
                            static_cast<int>(ctx.gpu_ids().at(0))};
  });
  swarm::runtime rt{app, cuda_node()};
  REQUIRE(std::string{rt.gpu_backend()} == "cuda");
  size_t free = 0, total = 0;
  swarm::gpu_test::memory_info(free, total);
  REQUIRE(total > 0);
  CHECK(rt.total_resources().get("gpu_memory") == doctest::Approx(double(total)));
  auto seen = rt.submit(gpu(1), where).get(30s).value();
  CHECK(seen[0] == seen[1]);
}

TEST_CASE("GPU tasks submitted the moment the runtime starts find its device open") {
  swarm::application app;
  auto make = app.function("make", [](swarm::context& ctx) {
    return ctx.to_device(std::vector<uint32_t>(256, 3)).value().size();
  });
  swarm::runtime rt{app, cuda_node()};
  std::vector<swarm::object_ref<size_t>> runs;
  for (int i = 0; i < 8; ++i)
    runs.push_back(rt.submit(gpu(0.125), make));
  for (auto& r : runs) {
    auto v = r.get(60s);
    INFO((v ? std::string{"ok"} : v.err().to_string()));
    CHECK(v.has_value());
  }
}

TEST_CASE("bytes sent to the device come back bit for bit, from one byte to 64 MiB") {
  swarm::application app;
  auto up = app.function("up", [](swarm::context& ctx, std::vector<uint8_t> bytes) {
    return ctx.to_device(bytes).value();
  });
  auto round_trip =
      app.function("round_trip", [](swarm::context& ctx, std::vector<uint8_t> bytes) {
        return ctx.to_device(bytes).value().to_host().value();
      });
  swarm::runtime rt{app, cuda_node()};
  std::mt19937 gen{7};
  constexpr size_t mib = size_t{1} << 20;
  for (size_t n : {size_t{1}, size_t{4099}, mib, 8 * mib + 1, 64 * mib}) {
    CAPTURE(n);
    std::vector<uint8_t> bytes(n);
    for (auto& b : bytes)
      b = static_cast<uint8_t>(gen());
    CHECK(rt.submit(gpu(1), round_trip, bytes).get(60s).value() == bytes);
    // Made by one task, read by the driver after the task is gone.
    auto buf = rt.submit(gpu(1), up, bytes).get(60s).value();
    CHECK(buf.on_device());
    CHECK(buf.to_host().value() == bytes);
  }
}

TEST_CASE("sixteen tasks at once take their bytes to the device and back bit for bit") {
  swarm::application app;
  auto round_trip =
      app.function("round_trip", [](swarm::context& ctx, uint32_t seed, uint64_t n) {
        std::vector<uint8_t> bytes(n);
        std::mt19937 gen{seed};
        for (auto& b : bytes)
          b = static_cast<uint8_t>(gen());
        return ctx.to_device(bytes).value().to_host().value() == bytes;
      });
  swarm::runtime rt{app, cuda_node()};
  std::vector<swarm::object_ref<bool>> all;
  for (uint32_t i = 0; i < 16; ++i)
    all.push_back(
        rt.submit(gpu(0.0625), round_trip, i, uint64_t{(size_t{12} << 20) + i}));
  for (uint32_t i = 0; i < 16; ++i) {
    CAPTURE(i);
    auto r = all[i].get(120s);
    INFO((r ? std::string{"ok"} : r.err().to_string()));
    CHECK((r.has_value() && r.value()));
  }
}

TEST_CASE("a launch error the task left unchecked fails it with device_error when its "
          "stream is waited for, not retried, and the device goes on") {
  static std::atomic<int> runs{0};
  swarm::application app;
  auto unchecked = app.function("unchecked", [](swarm::context& ctx) {
    ++runs;
    swarm::gpu_test::launch_bad_configuration_unchecked(ctx.gpu_stream());
    return 0;
  });
  auto fine = app.function("fine", [](swarm::context& ctx) {
    auto b = ctx.device_alloc(4096).value();
    must_launch(launch_fill(b.data_as<uint32_t>(), 1024, 3, 0, ctx.gpu_stream()));
    return wrong_words(b.to_host_as<uint32_t>().value(), 3);
  });
  swarm::runtime rt{app, cuda_node()};
  swarm::task_options retried = gpu(1);
  retried.max_retries = 3;
  retried.retry_exceptions = true;
  auto r = rt.submit(retried, unchecked).get(30s);
  REQUIRE_FALSE(r.has_value());
  INFO(r.err().to_string());
  CHECK(r.err().code == swarm::errc::device_error);
  CHECK(runs == 1);
  CHECK(rt.submit(gpu(1), fine).get(30s).value() == 0);
}

TEST_CASE("a kernel's output passes from task to task on the device and reads right "
          "on the host") {
  swarm::application app;
  auto make = app.function("make", [](swarm::context& ctx, uint64_t words) {
    auto b = ctx.device_alloc(words * 4).value();
    must_launch(
        launch_fill(b.data_as<uint32_t>(), words, 0xabcd0000u, 0, ctx.gpu_stream()));
    return b;
  });
  auto check = app.function("check", [](swarm::context& ctx, swarm::device_buffer b) {
    auto here = ctx.on_device(b).value();
    return wrong_words(here.to_host_as<uint32_t>().value(), 0xabcd0000u);
  });
  swarm::runtime rt{app, cuda_node()};
  auto buf = rt.submit(gpu(1), make, uint64_t{1} << 22);
  CHECK(rt.submit(gpu(1), check, buf).get(60s).value() == 0);
  CHECK(wrong_words(buf.get(60s).value().to_host_as<uint32_t>().value(), 0xabcd0000u) ==
        0);
}

TEST_CASE("many GPU tasks at once each fill and read back their own device memory") {
  swarm::application app;
  auto own = app.function("own", [](swarm::context& ctx, uint32_t pattern) {
    constexpr size_t words = 1 << 20;
    auto b = ctx.device_alloc(words * 4).value();
    must_launch(launch_fill(b.data_as<uint32_t>(), words, pattern, 2, ctx.gpu_stream()));
    return wrong_words(b.to_host_as<uint32_t>().value(), pattern);
  });
  swarm::runtime rt{app, cuda_node()};
  std::vector<swarm::object_ref<size_t>> runs;
  for (uint32_t i = 0; i < 64; ++i)
    runs.push_back(rt.submit(gpu(0.125), own, i * 0x01010101u));
  for (auto& r : runs)
    CHECK(r.get(120s).value() == 0);
}

namespace {
std::atomic<bool> writer_dropped{false};
std::atomic<bool> reader_done{false};
} // namespace

TEST_CASE("a buffer a task drops while its kernel still writes it is not given to "
          "another task before that kernel is done") {
  writer_dropped = false;
  reader_done = false;
  swarm::application app;
  constexpr size_t words = 1 << 20;
  // Queues a slow fill of A's pattern, drops the buffer at once, and stays running
  // (its stream not yet waited for) until the reader is done.
  auto writer = app.function("writer", [](swarm::context& ctx) {
    {
      auto b = ctx.device_alloc(words * 4).value();
      must_launch(
          launch_fill(b.data_as<uint32_t>(), words, 0xaaaaaaaau, 300, ctx.gpu_stream()));
    }
    writer_dropped = true;
    return wait_for(reader_done, 10s);
  });
  // Takes a buffer of the same size, writes B's pattern, and reads it after A's kernel
  // has had time to finish.
  auto reader = app.function("reader", [](swarm::context& ctx) {
    if (!wait_for(writer_dropped, 10s)) throw std::runtime_error{"the writer never ran"};
    auto b = ctx.device_alloc(words * 4).value();
    must_launch(
        launch_fill(b.data_as<uint32_t>(), words, 0xbbbbbbbbu, 0, ctx.gpu_stream()));
    std::this_thread::sleep_for(600ms);
    auto wrong = wrong_words(b.to_host_as<uint32_t>().value(), 0xbbbbbbbbu);
    reader_done = true;
    return wrong;
  });
  swarm::runtime rt{app, cuda_node()};
  auto w = rt.submit(gpu(0.5), writer);
  auto r = rt.submit(gpu(0.5), reader);
  CHECK(r.get(60s).value() == 0);
  CHECK(w.get(60s).value());
}

namespace {
std::atomic<bool> slow_launched{false};
std::atomic<bool> quick_done{false};
} // namespace

TEST_CASE("a task's work on its own stream does not wait behind another running task's "
          "slow kernel") {
  slow_launched = false;
  quick_done = false;
  swarm::application app;
  constexpr size_t words = 1 << 20;
  using clock = std::chrono::steady_clock;
  // Queues a kernel of three seconds and stays running until the quick task is done.
  auto slow = app.function("slow", [](swarm::context& ctx) {
    auto b = ctx.device_alloc(words * 4).value();
    must_launch(
        launch_fill(b.data_as<uint32_t>(), words, 0x5a5a5a5au, 3000, ctx.gpu_stream()));
    slow_launched = true;
    return wait_for(quick_done, 20s);
  });
  // Fills and reads its own buffer meanwhile: milliseconds of work on its own stream.
  auto quick = app.function("quick", [](swarm::context& ctx) {
    if (!wait_for(slow_launched, 10s))
      throw std::runtime_error{"the slow task never ran"};
    auto ms = [](clock::time_point from) {
      return static_cast<int64_t>(
          std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - from)
              .count());
    };
    std::vector<int64_t> took;
    auto start = clock::now();
    auto b = ctx.device_alloc(words * 4).value();
    took.push_back(ms(start));
    must_launch(
        launch_fill(b.data_as<uint32_t>(), words, 0x11111111u, 0, ctx.gpu_stream()));
    took.push_back(ms(start));
    auto wrong = wrong_words(b.to_host_as<uint32_t>().value(), 0x11111111u);
    took.push_back(ms(start));
    took.push_back(static_cast<int64_t>(wrong));
    quick_done = true;
    return took;
  });
  swarm::runtime rt{app, cuda_node()};
  auto s = rt.submit(gpu(0.5), slow);
  auto took = rt.submit(gpu(0.5), quick).get(60s).value();
  REQUIRE(took.size() == 4);
  MESSAGE("quick task: allocated after " << took[0] << " ms, launched after " << took[1]
                                         << " ms, read after " << took[2] << " ms");
  CHECK(took[3] == 0); // it read what it wrote
  // Behind the slow kernel it would take its three seconds.
  CHECK(took[2] < 1500);
  CHECK(s.get(60s).value());
}

TEST_CASE("a launch the device refuses fails its task as the application's error, and "
          "the device goes on") {
  swarm::application app;
  auto refused = app.function("refused", [](swarm::context& ctx) {
    must_launch(swarm::gpu_test::launch_bad_configuration(ctx.gpu_stream()));
    return 0;
  });
  auto fine = app.function("fine", [](swarm::context& ctx) {
    auto b = ctx.device_alloc(4096).value();
    must_launch(launch_fill(b.data_as<uint32_t>(), 1024, 5, 0, ctx.gpu_stream()));
    return wrong_words(b.to_host_as<uint32_t>().value(), 5);
  });
  swarm::runtime rt{app, cuda_node()};
  auto r = rt.submit(gpu(1), refused).get(30s);
  REQUIRE_FALSE(r.has_value());
  INFO(r.err().to_string());
  CHECK(r.err().code == swarm::errc::application_error);
  CHECK(r.err().message.find("kernel launch failed: cudaError") != std::string::npos);
  CHECK(rt.submit(gpu(1), fine).get(30s).value() == 0);
}

namespace {
std::atomic<int> fault_runs{0};
} // namespace

TEST_CASE("an illegal-address kernel fails its task with device_failed, not retried, CPU "
          "tasks run on, the device's buffers are lost, and later GPU tasks fail at once "
          "saying the process must be restarted") {
  swarm::application app;
  auto keep = app.function("keep", [](swarm::context& ctx) {
    return ctx.to_device(std::vector<uint32_t>(1024, 7)).value();
  });
  auto fault = app.function("fault", [](swarm::context& ctx) {
    ++fault_runs;
    must_launch(swarm::gpu_test::launch_illegal_address(ctx.gpu_stream()));
    return 0;
  });
  auto cpu = app.function("cpu", [](int x) { return x * 2; });
  auto fine = app.function("fine", [](swarm::context& ctx) {
    auto b = ctx.device_alloc(1 << 20).value();
    must_launch(launch_fill(b.data_as<uint32_t>(), 1 << 18, 9, 0, ctx.gpu_stream()));
    return wrong_words(b.to_host_as<uint32_t>().value(), 9);
  });
  swarm::runtime rt{app, cuda_node()};
  auto kept = rt.submit(gpu(1), keep).get(30s).value();
  swarm::task_options retried = gpu(1);
  retried.max_retries = 3;
  retried.retry_exceptions = true;
  fault_runs = 0;
  auto r = rt.submit(retried, fault).get(30s);
  REQUIRE_FALSE(r.has_value());
  INFO(r.err().to_string());
  CHECK(r.err().code == swarm::errc::device_failed);
  CHECK(fault_runs == 1);
  CHECK(rt.submit(cpu, 21).get(30s).value() == 42);
  auto lost = kept.to_host();
  REQUIRE_FALSE(lost.has_value());
  CHECK(lost.err().code == swarm::errc::object_lost);
  // Bounded: the restart that finds the context poisoned comes within seconds; from then
  // on every GPU task fails at once with the reason.
  std::string last;
  for (int i = 0; i < 100 && last.find("must be restarted") == std::string::npos; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    auto again = rt.submit(gpu(1), fine).get(30s);
    CHECK(std::chrono::steady_clock::now() - t0 < 10s);
    REQUIRE_FALSE(again.has_value());
    CHECK(again.err().code == swarm::errc::device_failed);
    last = again.err().message;
    if (last.find("must be restarted") == std::string::npos)
      std::this_thread::sleep_for(50ms);
  }
  INFO("the last GPU task after the fault: " << last);
  CHECK(last.find("cudaErrorIllegalAddress") != std::string::npos);
  CHECK(last.find("must be restarted") != std::string::npos);
  CHECK(rt.submit(cpu, 1).get(30s).value() == 2);
}

TEST_CASE("asking for more memory than the device has fails at once, whatever the wait") {
  swarm::application app;
  auto ask = app.function("ask", [](swarm::context& ctx, uint64_t bytes, int wait_ms) {
    auto b = ctx.device_alloc(bytes, std::chrono::milliseconds(wait_ms));
    return b ? std::string{"granted"} : b.err().message;
  });
  swarm::runtime rt{app, cuda_node()};
  size_t free = 0, total = 0;
  swarm::gpu_test::memory_info(free, total);
  auto t0 = std::chrono::steady_clock::now();
  auto huge = rt.submit(gpu(1), ask, uint64_t{total} * 2, 10000).get(30s).value();
  CHECK(huge.find("larger than its memory") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - t0 < 5s);
}
