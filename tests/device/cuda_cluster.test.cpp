// Swarm's GPU path across node processes on one real CUDA device: this process is the
// head (without GPUs) and the driver; two node processes (this binary, `--serve`) share
// the device.

#include <doctest/doctest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "framework/swarm.hpp"
#include "tests/cluster/node_process.hpp"
#include "tests/device/device_app.hpp"

using namespace std::chrono_literals;
using swarm::cluster_test::free_port;
using swarm::cluster_test::node_process;

namespace {

std::string this_binary() {
  char path[4096];
  auto n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : std::string{};
}

// The head here, worker-1 and worker-2 as node processes on the GPU.
struct gpu_cluster {
  std::string dir;
  std::string config;
  swarm::cluster_config cfg;
  swarm::application app;
  std::unique_ptr<swarm::runtime> rt;
  std::unique_ptr<node_process> w1, w2;
  swarm::task_fn<swarm::device_buffer(uint64_t, uint32_t)> fill;
  swarm::task_fn<swarm::gpu_test::dev_seen(swarm::device_buffer, uint32_t)> check;

  /// `worker_keys`: more keys of each worker's [[node]] table.
  explicit gpu_cluster(const std::string& worker_keys = "") {
    char tmpl[] = "/tmp/swarm-gpu-cluster-XXXXXX";
    dir = ::mkdtemp(tmpl);
    config = dir + "/cluster.toml";
    auto node = [](const std::string& name, const std::string& keys) {
      return "[[node]]\nname = \"" + name + "\"\naddress = \"127.0.0.1\"\nport = " +
             std::to_string(free_port()) + "\ncpus = 2\n" + keys;
    };
    std::ofstream{config} << "[cluster]\nname = \"gpu\"\n"
                             "secret = \"the-secret-of-the-gpu-device-tests\"\n"
                             "heartbeat_ms = 100\nnode_timeout_ms = 1000\n"
                          << node("head", "role = \"head\"\ngpus = 0\n")
                          << node("worker-1", "gpu_backend = \"cuda\"\n" + worker_keys)
                          << node("worker-2", "gpu_backend = \"cuda\"\n" + worker_keys);
    cfg = swarm::load_cluster_config(config).value();
    swarm::gpu_test::register_device_functions(app);
    fill = app.find_function<swarm::device_buffer(uint64_t, uint32_t)>("dev_fill").value();
    check = app.find_function<swarm::gpu_test::dev_seen(swarm::device_buffer, uint32_t)>(
                   "dev_check")
                .value();
    rt = std::make_unique<swarm::runtime>(app, cfg, "head");
    w1 = start("worker-1");
    w2 = start("worker-2");
    REQUIRE(wait_alive(3));
  }

  ~gpu_cluster() {
    w1.reset();
    w2.reset();
    rt.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }

  std::unique_ptr<node_process> start(const std::string& name) {
    return std::make_unique<node_process>(
        this_binary(),
        std::vector<std::string>{"--serve", "--config", config, "--node", name},
        dir + "/" + name + ".log");
  }

  // Bounded: up to 30 s (a CUDA context takes a while on each node).
  bool wait_alive(size_t n) {
    for (int i = 0; i < 300; ++i) {
      auto s = swarm::cluster_status(cfg, 2s);
      if (s && s->alive() >= n) return true;
      std::this_thread::sleep_for(100ms);
    }
    return false;
  }

  std::string log_of(const std::string& name) {
    std::ifstream in{dir + "/" + name + ".log"};
    return {std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
  }

  static swarm::task_options on(const std::string& node) {
    swarm::task_options o;
    o.node = node;
    o.resources.set("GPU", 1);
    return o;
  }
};

} // namespace

TEST_CASE(
    "two node processes share one device: a buffer one makes on the GPU is mapped "
    "by a GPU task of the other (CUDA IPC) and read bit for bit, round after round, "
    "and the driver reads its bytes") {
  gpu_cluster c;
  auto& fill = c.fill;
  auto& check = c.check;
  constexpr uint64_t words = uint64_t{1} << 22; // 16 MiB
  // Each round's buffer is a block freed by the round before, mapped again.
  for (uint32_t round = 0; round < 6; ++round) {
    CAPTURE(round);
    auto pattern = 0x5eed0000u + round;
    auto buf = c.rt->submit(gpu_cluster::on("worker-1"), fill, words, pattern);
    auto there =
        c.rt->submit(gpu_cluster::on("worker-2"), check, buf, pattern).get(60s).value();
    CHECK(there.node == "worker-2");
    CHECK(there.arrived_on_device); // mapped, not sent through the host
    CHECK(there.wrong == 0);
  }
  auto buf = c.rt->submit(gpu_cluster::on("worker-1"), fill, words, 0x5eed0000u);
  auto there = c.rt->submit(gpu_cluster::on("worker-2"), check, buf, 0x5eed0000u)
                   .get(60s)
                   .value();
  CHECK(there.arrived_on_device);
  CHECK(there.wrong == 0);
  auto home = c.rt->submit(gpu_cluster::on("worker-1"), check, buf, 0x5eed0000u)
                  .get(60s)
                  .value();
  CHECK(home.arrived_on_device);
  CHECK(home.wrong == 0);
  auto at_driver = buf.get(60s).value();
  CHECK(swarm::gpu_test::wrong_words(at_driver.to_host_as<uint32_t>().value(),
                                     0x5eed0000u) == 0);
}

TEST_CASE("with gpu_sharing off a buffer one node process makes on the GPU reaches a GPU "
          "task of another on the same device through the host, bit for bit") {
  gpu_cluster c{"gpu_sharing = false\n"};
  constexpr uint64_t words = uint64_t{1} << 22;
  auto buf = c.rt->submit(gpu_cluster::on("worker-1"), c.fill, words, 0x5eed0000u);
  auto there = c.rt->submit(gpu_cluster::on("worker-2"), c.check, buf, 0x5eed0000u)
                   .get(60s)
                   .value();
  CHECK_FALSE(there.arrived_on_device);
  CHECK(there.landed == 0); // written to the device chunk by chunk as it came
  CHECK(there.wrong == 0);
}

TEST_CASE("a node process whose GPU faults fails the task with device_failed and exits "
          "with code 3, started again, it runs GPU work on a fresh context") {
  gpu_cluster c;
  auto& fill = c.fill;
  auto& check = c.check;
  auto fault = c.app.find_function<int()>("dev_fault").value();
  auto r = c.rt->submit(gpu_cluster::on("worker-1"), fault).get(60s);
  REQUIRE_FALSE(r.has_value());
  INFO(r.err().to_string());
  CHECK(r.err().code == swarm::errc::device_failed);
  auto code = c.w1->wait_exit(30s);
  INFO(c.log_of("worker-1"));
  CHECK(code == swarm::exit_gpu_lost);
  // worker-2, on the same device, was not touched.
  auto other = c.rt->submit(gpu_cluster::on("worker-2"), check,
                            c.rt->submit(gpu_cluster::on("worker-2"), fill, uint64_t{1024}, 7u), 7u)
                   .get(60s);
  REQUIRE(other.has_value());
  CHECK(other->wrong == 0);
  c.w1 = c.start("worker-1");
  // Bounded: the head sees the old worker-1 dead, then the new one alive.
  bool ran = false;
  for (int i = 0; i < 60 && !ran; ++i) {
    auto again = c.rt->submit(gpu_cluster::on("worker-1"), check,
                              c.rt->submit(gpu_cluster::on("worker-1"), fill, uint64_t{1024}, 9u), 9u)
                     .get(30s);
    ran = again && again->node == "worker-1" && again->wrong == 0;
    if (!ran) std::this_thread::sleep_for(500ms);
  }
  CHECK(ran);
}
