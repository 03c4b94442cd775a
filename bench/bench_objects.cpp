// Object store puts and gets, beside memcpy of the same bytes as the floor.

#include <cstring>
#include <vector>

#include <benchmark/benchmark.h>

#include "framework/swarm.hpp"

namespace {

constexpr size_t big_object_bytes = size_t{100} << 20;

} // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  swarm::application app;
  swarm::runtime rt{app};

  // Puts of a small value; the references are dropped outside the timed region.
  benchmark::RegisterBenchmark("BM_objects_put_small", [&](benchmark::State& state) {
    std::vector<swarm::object_ref<int>> refs;
    refs.reserve(1 << 16);
    int i = 0;
    for (auto _ : state) {
      refs.push_back(rt.put(i++));
      if (refs.size() == refs.capacity()) {
        state.PauseTiming();
        refs.clear();
        state.ResumeTiming();
      }
    }
    state.SetItemsProcessed(state.iterations());
  });

  // Gets of a small object that is already there.
  benchmark::RegisterBenchmark("BM_objects_get_small", [&](benchmark::State& state) {
    auto small = rt.put(42);
    for (auto _ : state)
      benchmark::DoNotOptimize(small.get().value());
    state.SetItemsProcessed(state.iterations());
  });

  // Zero-copy gets of a 100 MB object that is already there.
  benchmark::RegisterBenchmark(
      "BM_objects_get_100mb_shared", [&](benchmark::State& state) {
        auto big = rt.put(std::vector<char>(big_object_bytes, 'x'));
        for (auto _ : state)
          benchmark::DoNotOptimize(big.get_shared().value());
        state.SetItemsProcessed(state.iterations());
        state.SetBytesProcessed(state.iterations() *
                                static_cast<int64_t>(big_object_bytes));
      });

  // The floor: copying the same 100 MB once.
  benchmark::RegisterBenchmark("BM_memcpy_100mb", [](benchmark::State& state) {
    std::vector<char> src(big_object_bytes, 'x');
    std::vector<char> dst(big_object_bytes, 'y');
    for (auto _ : state) {
      std::memcpy(dst.data(), src.data(), big_object_bytes);
      benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations());
    state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(big_object_bytes));
  });

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
