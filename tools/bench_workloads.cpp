#include "tools/bench_workloads.hpp"

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "framework/context.hpp"

namespace swarm::tools {

namespace {

int noop(int x) {
  return x;
}

void count(stream_writer<int>& out, int n) {
  for (int i = 0; i < n; ++i)
    out.write(i).value();
}

int add(int a, int b) {
  return a + b;
}

int sum10(int a0, int a1, int a2, int a3, int a4, int a5, int a6, int a7, int a8,
          int a9) {
  return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9;
}

int64_t byte_count(const std::vector<uint8_t>& b) {
  return static_cast<int64_t>(b.size());
}

std::vector<uint8_t> make_bytes(int64_t n) {
  std::vector<uint8_t> b(static_cast<size_t>(n));
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = static_cast<uint8_t>(i);
  return b;
}

int64_t reset_peak_rss(int) {
  std::ofstream clear{"/proc/self/clear_refs"};
  clear << "5"; // resets VmHWM to VmRSS (Linux 4.0+)
  clear.close();
  return clear ? vm_bytes("VmRSS") : -1;
}

int64_t peak_rss_with(const std::vector<uint8_t>&) {
  return vm_bytes("VmHWM");
}

// Runs `n` `bench.noop` tasks from this node, each either pinned to node `where` or
// demanding the resource only `where` has (`at_<where>`), so that this node spills it;
// the microseconds from the first submit to the last result.
int64_t fan_out(context& ctx, int n, std::string where, bool pinned) {
  auto noop_fn = ctx.app().find_function<int(int)>("bench.noop").value();
  task_options o;
  if (pinned)
    o.node = where;
  else
    o.resources.set("at_" + where, 1);
  auto t0 = std::chrono::steady_clock::now();
  std::vector<object_ref<int>> refs;
  refs.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    refs.push_back(ctx.submit(o, noop_fn, i));
  for (int i = 0; i < n; ++i)
    if (refs[static_cast<size_t>(i)].get().value() != i)
      throw std::runtime_error{"fan_out: a wrong result"};
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now() - t0)
      .count();
}

int nap(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  return ms;
}

} // namespace

int64_t vm_bytes(const std::string& key) {
  std::ifstream in{"/proc/self/status"};
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key + ":", 0) == 0)
      return std::stoll(line.substr(key.size() + 1)) * 1024;
  return -1;
}

object_ref<int> bench_echo::ping_async(int x) {
  return actor_context().put(x);
}

int64_t bench_echo::slow_take(const std::vector<uint8_t>& b) {
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return static_cast<int64_t>(b.size());
}

bench_fns register_bench(application& app) {
  auto echo = app.actor_type<bench_echo>("bench.echo");
  echo.method("ping", &bench_echo::ping)
      .method("ping_async", &bench_echo::ping_async)
      .method("echo_bytes", &bench_echo::echo_bytes)
      .method("take_bytes", &bench_echo::take_bytes)
      .method("slow_take", &bench_echo::slow_take);
  return {app.function("bench.noop", noop),
          app.function("bench.add", add),
          app.function("bench.sum10", sum10),
          app.function("bench.byte_count", byte_count),
          app.function("bench.reset_peak_rss", reset_peak_rss),
          app.function("bench.peak_rss_with", peak_rss_with),
          app.function("bench.nap", nap),
          app.function("bench.make_bytes", make_bytes),
          echo,
          app.function("bench.count", count),
          app.function("bench.fan_out", fan_out),
          app.function("bench.gpu_make",
                       [](context& ctx, uint64_t bytes) {
                         return ctx.device_alloc(bytes).value();
                       }),
          app.function("bench.gpu_take", [](context& ctx, device_buffer b, int device) {
            return reinterpret_cast<uint64_t>(ctx.on_device(b, device).value().data());
          })};
}

} // namespace swarm::tools
