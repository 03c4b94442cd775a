#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <stdexcept>
#include <vector>

#include "gpu/device_api.hpp"

using namespace std::chrono_literals;
using swarm::errc;
using swarm::gpu::host_device_api;

namespace {

// A kernel held back until `open` is called: work still running on its stream.
struct gate {
  std::promise<void> opened;
  std::shared_future<void> is_open = opened.get_future().share();
  void open() { opened.set_value(); }
};

} // namespace

TEST_CASE("a host device's kernel runs on its stream after the launch returns, and the "
          "stream's copies, events and synchronize wait for it while another stream "
          "goes on") {
  host_device_api api{{1 << 20}};
  auto s = api.make_stream(0).value();
  auto other = api.make_stream(0).value();
  auto* mem = static_cast<int*>(api.allocate(0, 4 * sizeof(int)).value());
  gate g;
  REQUIRE(api.launch(0, s, [&, wait = g.is_open] {
    wait.wait();
    for (int i = 0; i < 4; ++i)
      mem[i] = 40 + i;
  }));
  auto before = api.record(0, s).value();
  CHECK_FALSE(api.done(0, before)); // the kernel has not run
  // A copy on another stream is not held up by it.
  int one = 7;
  REQUIRE(api.from_host(0, mem + 3, &one, sizeof one, other));
  auto ahead = api.record(0, other).value();
  CHECK(api.done(0, ahead));
  // A copy on the kernel's stream waits for it, and reads what it wrote.
  std::vector<int> out(4);
  auto copied = std::async(std::launch::async, [&] {
    return api.to_host(out.data(), 0, mem, 4 * sizeof(int), s);
  });
  CHECK(copied.wait_for(50ms) == std::future_status::timeout);
  CHECK_FALSE(api.done(0, before));
  g.open();
  REQUIRE(copied.get());
  CHECK(out == std::vector<int>{40, 41, 42, 43});
  api.wait(0, before);
  CHECK(api.done(0, before));
  REQUIRE(api.synchronize(0, s));
  api.destroy_event(0, before);
  api.destroy_event(0, ahead);
  CHECK(api.release(0, mem));
  api.destroy_stream(0, s);
  api.destroy_stream(0, other);
}

TEST_CASE("freeing host device memory waits for the work queued on the device, as "
          "cudaFree does") {
  host_device_api api{{1 << 20}};
  auto s = api.make_stream(0).value();
  auto* mem = static_cast<int*>(api.allocate(0, sizeof(int)).value());
  gate g;
  std::atomic<bool> wrote{false};
  REQUIRE(api.launch(0, s, [&, wait = g.is_open] {
    wait.wait();
    *mem = 1; // still mapped: the free has not happened
    wrote = true;
  }));
  auto freed = std::async(std::launch::async, [&] { return api.release(0, mem); });
  CHECK(freed.wait_for(50ms) == std::future_status::timeout);
  g.open();
  REQUIRE(freed.get());
  CHECK(wrote);
  CHECK(api.free_memory(0).value() == size_t{1} << 20);
  api.destroy_stream(0, s);
}

TEST_CASE("a host kernel that throws faults its device for good: the work behind it is "
          "skipped, the device's calls fail naming the fault, it cannot be opened "
          "again, and another device goes on") {
  host_device_api api{{1 << 20, 1 << 20}};
  auto s = api.make_stream(0).value();
  auto s1 = api.make_stream(1).value();
  std::atomic<bool> ran_after{false};
  gate g; // both are queued before the first faults
  REQUIRE(api.launch(0, s, [wait = g.is_open] {
    wait.wait();
    throw std::runtime_error("illegal address at 0x10");
  }));
  REQUIRE(api.launch(0, s, [&] { ran_after = true; }));
  g.open();
  auto r = api.synchronize(0, s);
  REQUIRE_FALSE(r);
  CHECK(r.err().code == errc::device_failed);
  CHECK(r.err().message.find("illegal address at 0x10") != std::string::npos);
  CHECK_FALSE(ran_after);
  CHECK(api.allocate(0, 16).err().code == errc::device_failed);
  CHECK(api.launch(0, s, [] {}).err().code == errc::device_failed);
  auto reopened = api.open(0, true);
  REQUIRE_FALSE(reopened);
  CHECK(reopened.err().message.find("illegal address at 0x10") != std::string::npos);
  // Device 1 is another context.
  auto* mem = api.allocate(1, 16).value();
  REQUIRE(api.launch(1, s1, [mem] { std::memset(mem, 1, 16); }));
  CHECK(api.synchronize(1, s1));
  CHECK(api.release(1, mem));
  api.destroy_stream(1, s1);
}
