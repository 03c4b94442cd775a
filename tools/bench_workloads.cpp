#include "tools/bench_workloads.hpp"

namespace swarm::tools {

namespace {

int noop(int x) {
  return x;
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

} // namespace

bench_fns register_bench(application& app) {
  auto echo = app.actor_type<bench_echo>("bench.echo");
  echo.method("ping", &bench_echo::ping)
      .method("echo_bytes", &bench_echo::echo_bytes)
      .method("take_bytes", &bench_echo::take_bytes);
  return {app.function("bench.noop", noop), app.function("bench.add", add),
          app.function("bench.sum10", sum10),
          app.function("bench.byte_count", byte_count), echo};
}

} // namespace swarm::tools
