// Task throughput of an embedded single-node runtime.

#include <vector>

#include <benchmark/benchmark.h>

#include "framework/swarm.hpp"

namespace {

constexpr int batch_size = 1'000;

} // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  swarm::application app;
  auto add = app.function("add", [](int a, int b) { return a + b; });
  swarm::runtime rt{app};

  // One task at a time: submit, then wait for its result.
  benchmark::RegisterBenchmark("BM_tasks_submit_get", [&](benchmark::State& state) {
    int i = 0;
    for (auto _ : state)
      benchmark::DoNotOptimize(rt.submit(add, i++, 1).get().value());
    state.SetItemsProcessed(state.iterations());
  })->UseRealTime();

  // A batch submitted at once, then every result read.
  benchmark::RegisterBenchmark("BM_tasks_async_batch", [&](benchmark::State& state) {
    std::vector<swarm::object_ref<int>> refs;
    refs.reserve(batch_size);
    for (auto _ : state) {
      refs.clear();
      for (int i = 0; i < batch_size; ++i)
        refs.push_back(rt.submit(add, i, 1));
      for (auto& r : refs)
        benchmark::DoNotOptimize(r.get().value());
    }
    state.SetItemsProcessed(state.iterations() * batch_size);
  })->UseRealTime();

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
