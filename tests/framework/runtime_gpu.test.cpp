#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <set>
#include <thread>
#include <vector>

#include "framework/swarm.hpp"

using namespace std::chrono_literals;

namespace {

// A node whose `gpus` devices are simulated in host memory, `bytes` each.
swarm::runtime_config host_gpus(double gpus, size_t bytes = 8 << 20) {
  swarm::runtime_config cfg;
  cfg.cpus = 4;
  cfg.gpu_backend = "host";
  cfg.extra_resources.set("GPU", gpus);
  cfg.extra_resources.set("gpu_memory", static_cast<double>(bytes) * gpus);
  return cfg;
}

swarm::task_options gpu(double g) {
  swarm::task_options o;
  o.resources.set("GPU", g);
  return o;
}

std::vector<int> iota(int n) {
  std::vector<int> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 1);
  return v;
}

// Where a buffer is, as a task saw it.
struct placed {
  int device = -1;
  uint64_t address = 0;
  std::vector<int> values;
};

template <class Inspector> bool inspect(Inspector& f, placed& p) {
  return f(p.device, p.address, p.values);
}

} // namespace

TEST_CASE("a device buffer a GPU task returns passes to the next task on its device "
          "without moving") {
  swarm::application app;
  auto make = app.function(
      "make", [](swarm::context& ctx, int n) { return ctx.to_device(iota(n)).value(); });
  auto look = app.function("look", [](swarm::context& ctx, swarm::device_buffer b) {
    auto here = ctx.on_device(b).value();
    placed p{here.device(), reinterpret_cast<uint64_t>(here.data()),
             here.to_host_as<int>().value()};
    CHECK(here.data() == b.data());
    return p;
  });
  swarm::runtime rt{app, host_gpus(1)};
  CHECK(std::string{rt.gpu_backend()} == "host");
  auto buf = rt.submit(gpu(1), make, 50000); // 200 KB: a stored object, not inline
  auto seen = rt.submit(gpu(1), look, buf).get(10s).value();
  CHECK(seen.device == 0);
  CHECK(seen.values == iota(50000));
  auto b = buf.get(10s).value();
  CHECK(b.on_device());
  CHECK(b.size() == 200000);
  CHECK(reinterpret_cast<uint64_t>(b.data()) == seen.address);
  // The driver reads it on the host when it asks.
  CHECK(b.to_host_as<int>().value() == iota(50000));
}

TEST_CASE("a device buffer moves to another device of its node by a peer copy") {
  swarm::application app;
  auto hop = app.function("hop", [](swarm::context& ctx, int n) {
    auto on0 = ctx.to_device(iota(n), 0).value();
    auto on1 = ctx.on_device(on0, 1).value();
    CHECK(on0.device() == 0);
    CHECK(on1.device() == 1);
    CHECK(on1.data() != on0.data());
    CHECK(ctx.gpu_stream(0) != ctx.gpu_stream(1));
    return on1;
  });
  swarm::runtime rt{app, host_gpus(2)};
  auto b = rt.submit(gpu(2), hop, 1000).get(10s).value();
  CHECK(b.device() == 1);
  CHECK(b.to_host_as<int>().value() == iota(1000));
}

TEST_CASE("a device buffer that crossed nodes as bytes is written to the device of the "
          "task that takes it") {
  swarm::application app;
  auto make = app.function(
      "make", [](swarm::context& ctx, int n) { return ctx.to_device(iota(n)).value(); });
  auto take = app.function("take", [](swarm::context& ctx, swarm::device_buffer b) {
    // What the bulk path sends and the other node reads.
    auto& type = swarm::detail::type_of<swarm::device_buffer>();
    std::vector<uint8_t> wire;
    type.encode(&b, wire, nullptr);
    CHECK(swarm::encoded_size(b) == wire.size()); // counted without reading the device
    std::string why;
    auto read = type.decode(wire.data(), wire.size(), why, nullptr);
    REQUIRE(read.get() != nullptr);
    auto& staged = *static_cast<const swarm::device_buffer*>(read.get());
    CHECK_FALSE(staged.on_device());
    CHECK(staged.size() == b.size());
    auto there = ctx.on_device(staged).value();
    CHECK(there.on_device());
    CHECK(there.data() != b.data());
    return there.to_host_as<int>().value();
  });
  swarm::runtime rt{app, host_gpus(1)};
  auto buf = rt.submit(gpu(1), make, 40000);
  CHECK(rt.submit(gpu(1), take, buf).get(10s).value() == iota(40000));
}

TEST_CASE("a device buffer's bytes leave its device as the chunks sent need them, each "
          "byte once") {
  swarm::application app;
  auto make = app.function(
      "make", [](swarm::context& ctx, int n) { return ctx.to_device(iota(n)).value(); });
  swarm::runtime rt{app, host_gpus(1)};
  constexpr int n = 256 << 10; // 1 MiB of ints
  auto b = rt.submit(gpu(1), make, n).get(10s).value();
  REQUIRE(b.on_device());
  auto layout = swarm::lay_out(b);
  REQUIRE(layout.blocks.size() == 1);
  REQUIRE(layout.fills.size() == 1);
  auto& block = *b.block();
  CHECK(block.mirror_upto == 0); // laid out, nothing read
  auto* sent = reinterpret_cast<const int*>(layout.blocks[0].first);
  std::string why;
  // The first chunk: a 64 KiB piece of the head and the block.
  auto head = layout.head.size();
  REQUIRE(layout.fill(0, head + (64 << 10), why));
  CHECK(block.mirror_upto == size_t{64} << 10);
  CHECK_FALSE(block.mirror_read);
  CHECK(std::vector<int>(sent, sent + (16 << 10)) == iota(16 << 10));
  // A chunk asked again, or one before what was read, reads nothing more.
  REQUIRE(layout.fill(head, 1024, why));
  CHECK(block.mirror_upto == size_t{64} << 10);
  // The rest.
  REQUIRE(layout.fill(head + (64 << 10), layout.size(), why));
  CHECK(block.mirror_read);
  CHECK(std::vector<int>(sent, sent + n) == iota(n));
}

TEST_CASE("device memory is freed with the last reference to its buffer, and an "
          "allocation waits for it or fails with device_out_of_memory") {
  swarm::application app;
  auto hold = app.function("hold", [](swarm::context& ctx, int kb) {
    return ctx.device_alloc(static_cast<size_t>(kb) << 10).value();
  });
  auto try_alloc = app.function("try", [](swarm::context& ctx, int kb, int wait_ms) {
    auto b = ctx.device_alloc(static_cast<size_t>(kb) << 10,
                              std::chrono::milliseconds{wait_ms});
    if (!b) return b.err().to_string();
    return std::string{"ok"};
  });
  swarm::runtime rt{app, host_gpus(1, 1 << 20)};
  auto big = rt.submit(gpu(1), hold, 768);
  REQUIRE(big.get(10s));
  auto refused = rt.submit(gpu(1), try_alloc, 512, 0).get(10s).value();
  CHECK(refused.find("device_out_of_memory") == 0);
  CHECK(refused.find("GPU 0 of node") != std::string::npos);
  auto never = rt.submit(gpu(1), try_alloc, 2048, 10000).get(10s).value();
  CHECK(never.find("larger than its memory") != std::string::npos);
  auto waits = rt.submit(gpu(1), try_alloc, 512, 30000);
  rt.free(big); // its last reference: the 768 KB go back to the device
  CHECK(waits.get(30s).value() == "ok");
}

TEST_CASE("device memory is asked for outside a GPU task, or of a device the task was "
          "not given, with a clear error") {
  swarm::application app;
  auto plain = app.function(
      "plain", [](swarm::context& ctx) { return ctx.device_alloc(16).err().message; });
  auto other = app.function("other", [](swarm::context& ctx) {
    return ctx.device_alloc(16, 1s, 1).err().message;
  });
  swarm::runtime rt{app, host_gpus(2)};
  CHECK(rt.submit(plain).get(10s).value().find("outside a task given GPUs") !=
        std::string::npos);
  CHECK(rt.submit(gpu(0.5), other).get(10s).value().find("not one of this task's GPUs") !=
        std::string::npos);
  CHECK(rt.device_alloc(16).err().code == swarm::errc::invalid_argument);
}

TEST_CASE("gpu_memory defaults to the devices' memory and places GPU work by it") {
  swarm::application app;
  auto f = app.function(
      "f", [](swarm::context& ctx) { return std::string{ctx.gpu_backend()}; });
  swarm::runtime rt{app, host_gpus(2, 4 << 20)};
  CHECK(rt.total_resources().get("gpu_memory") == doctest::Approx(8 << 20));
  auto opts = gpu(1);
  opts.resources.set("gpu_memory", 2 << 20);
  CHECK(rt.submit(opts, f).get(10s).value() == "host");
  opts.resources.set("gpu_memory", 16 << 20);
  auto r = rt.submit(opts, f).get(10s);
  REQUIRE_FALSE(r);
  CHECK(r.err().code == swarm::errc::infeasible);
}

TEST_CASE("a GPU backend the node cannot run fails the start, naming the setting") {
  swarm::application app;
  auto start = [&](swarm::runtime_config cfg) -> std::string {
    try {
      swarm::runtime rt{app, cfg};
    } catch (const swarm::failure& e) {
      return e.what();
    }
    return "started";
  };
  auto cfg = host_gpus(1);
  cfg.gpu_backend = "tpu";
  CHECK(start(cfg).find("runtime_config.gpu_backend: must be") != std::string::npos);
  cfg = host_gpus(1);
  cfg.extra_resources.set("GPU", 0);
  CHECK(start(cfg).find("names none") != std::string::npos);
  cfg = host_gpus(1);
  cfg.gpu_backend = "none";
  cfg.extra_resources.set("GPU", 0);
  CHECK(start(cfg) == "started");
  // Here no device is found (or Swarm lacks CUDA); on a GPU machine, not 64.
  cfg = host_gpus(1);
  cfg.gpu_backend = "cuda";
  cfg.extra_resources.set("GPU", 64);
  CHECK(start(cfg).find("runtime_config.") != std::string::npos);
}

namespace {

// An actor that keeps a buffer on the GPU it holds between calls.
class embedder : public swarm::actor {
public:
  void on_start() override { start_devices_ = actor_context().gpu_ids(); }

  std::vector<uint32_t> devices() const { return start_devices_; }

  int load(int n) {
    weights_ = actor_context().to_device(iota(n)).value();
    return weights_.device();
  }

  std::vector<int> weights() const { return weights_.to_host_as<int>().value(); }

private:
  std::vector<uint32_t> start_devices_;
  swarm::device_buffer weights_;
};

} // namespace

TEST_CASE("an actor demanding a GPU holds its device for its life: its start and calls "
          "see it, tasks get the others, and it is free again when the actor goes") {
  swarm::application app;
  auto embedder_t = app.actor_type<embedder>("embedder");
  auto devices = app.function("devices", [](swarm::context& ctx) {
    return std::vector<uint32_t>(ctx.gpu_ids().begin(), ctx.gpu_ids().end());
  });
  swarm::runtime rt{app, host_gpus(2)};
  swarm::actor_options o;
  o.resources.set("GPU", 1);
  auto e = rt.spawn(o, embedder_t);
  auto held = e.call(&embedder::devices).get(10s).value();
  REQUIRE(held.size() == 1);
  CHECK(e.call(&embedder::load, 1000).get(10s).value() == static_cast<int>(held[0]));
  CHECK(e.call(&embedder::weights).get(10s).value() == iota(1000));
  // A task gets the device the actor does not hold; one needing both waits for it.
  auto other = rt.submit(gpu(1), devices).get(10s).value();
  REQUIRE(other.size() == 1);
  CHECK(other[0] != held[0]);
  auto both = rt.submit(gpu(2), devices);
  CHECK(rt.wait(std::vector{both}, 1, 300ms).ready.empty());
  rt.kill(e);
  CHECK(both.get(10s).value() == std::vector<uint32_t>{0, 1});
}

TEST_CASE("a device buffer kept after its runtime stopped reads as lost, not as freed "
          "memory") {
  swarm::application app;
  auto make = app.function(
      "make", [](swarm::context& ctx, int n) { return ctx.to_device(iota(n)).value(); });
  swarm::device_buffer kept;
  {
    swarm::runtime rt{app, host_gpus(1)};
    kept = rt.submit(gpu(1), make, 100).get(10s).value();
    CHECK(kept.to_host_as<int>().value() == iota(100));
  }
  auto gone = kept.to_host();
  REQUIRE_FALSE(gone);
  CHECK(gone.err().code == swarm::errc::object_lost);
}

TEST_CASE("a device buffer counts against its device's memory, not the object store's") {
  swarm::application app;
  auto hold = app.function("hold", [](swarm::context& ctx, int mb) {
    return ctx.device_alloc(static_cast<size_t>(mb) << 20).value();
  });
  auto cfg = host_gpus(1, 32 << 20);
  cfg.object_store_bytes = 2 << 20;
  cfg.spill = false;
  swarm::runtime rt{app, cfg};
  auto big = rt.submit(gpu(1), hold, 8); // four times the store
  REQUIRE(big.get(10s));
  CHECK(rt.stats().store_bytes < (1 << 20));
  CHECK(big.get(10s).value().size() == size_t{8} << 20);
}

TEST_CASE("GPU tasks running at once each have a stream of their own, more than the pool "
          "started with") {
  constexpr int running = 8; // twice the four streams a device starts with
  swarm::application app;
  std::atomic<int> arrived{0};
  auto stream_of = app.function("stream_of", [&](swarm::context& ctx) {
    auto s = reinterpret_cast<uint64_t>(ctx.gpu_stream());
    // All hold their stream at once: each waits (bounded) for the others.
    ++arrived;
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (arrived.load() < running && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(1ms);
    CHECK(reinterpret_cast<uint64_t>(ctx.gpu_stream()) == s); // the same all its run
    return s;
  });
  auto cfg = host_gpus(1);
  cfg.cpus = running;
  swarm::runtime rt{app, cfg};
  std::vector<swarm::object_ref<uint64_t>> refs;
  for (int i = 0; i < running; ++i)
    refs.push_back(rt.submit(gpu(1.0 / running), stream_of));
  std::set<uint64_t> streams;
  for (auto& r : refs)
    streams.insert(r.get(20s).value());
  CHECK(arrived.load() == running);
  CHECK(streams.size() == running);
  CHECK_FALSE(streams.count(0));
  // Given back when each finished: a second round takes the same streams again.
  arrived = 0;
  std::set<uint64_t> again;
  refs.clear();
  for (int i = 0; i < running; ++i)
    refs.push_back(rt.submit(gpu(1.0 / running), stream_of));
  for (auto& r : refs)
    again.insert(r.get(20s).value());
  CHECK(again == streams);
}
