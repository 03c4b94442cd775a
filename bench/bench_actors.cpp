// Actor call latency and throughput, beside a bare CAF request as the floor.

#include <algorithm>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>
#include <caf/all.hpp>

#include "framework/swarm.hpp"

namespace {

constexpr int batch_size = 1'000;

/// The actor every call goes to.
struct echo : swarm::actor {
  int ping(int x) { return x; }
};

} // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  swarm::application app;
  auto echo_t = app.actor_type<echo>("echo");
  swarm::runtime rt{app};
  auto h = rt.spawn(echo_t);

  // The scheduler settings Swarm gives its own actor system.
  caf::actor_system_config cfg;
  cfg.set("scheduler.policy", caf::atom("sharing"));
  cfg.set("scheduler.max-threads",
          std::max<size_t>(2, std::thread::hardware_concurrency()));
  caf::actor_system sys{cfg};
  auto raw_echo = sys.spawn(
      [](caf::event_based_actor*) -> caf::behavior { return {[](int x) { return x; }}; });

  // One call at a time from the driver thread.
  benchmark::RegisterBenchmark("BM_actors_call_sync", [&](benchmark::State& state) {
    int i = 0;
    for (auto _ : state)
      benchmark::DoNotOptimize(h.call(&echo::ping, i++).get().value());
    state.SetItemsProcessed(state.iterations());
  })->UseRealTime();

  // A batch of calls, then every result read.
  benchmark::RegisterBenchmark("BM_actors_call_async", [&](benchmark::State& state) {
    std::vector<swarm::object_ref<int>> refs;
    refs.reserve(batch_size);
    for (auto _ : state) {
      refs.clear();
      for (int i = 0; i < batch_size; ++i)
        refs.push_back(h.call(&echo::ping, i));
      for (auto& r : refs)
        benchmark::DoNotOptimize(r.get().value());
    }
    state.SetItemsProcessed(state.iterations() * batch_size);
  })->UseRealTime();

  // The floor: a blocking request from a scoped actor to an actor that replies.
  benchmark::RegisterBenchmark("BM_caf_raw_request", [&](benchmark::State& state) {
    caf::scoped_actor self{sys};
    int i = 0;
    for (auto _ : state)
      self->request(raw_echo, caf::infinite, i++)
          .receive(
              [](int x) { benchmark::DoNotOptimize(x); },
              [&](caf::error& err) { state.SkipWithError(caf::to_string(err).c_str()); });
    state.SetItemsProcessed(state.iterations());
  })->UseRealTime();

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  caf::anon_send_exit(raw_echo, caf::exit_reason::user_shutdown);
  return 0;
}
