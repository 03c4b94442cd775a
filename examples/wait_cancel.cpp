// Waiting on some of many futures, taking one that is done, and cancelling the rest:
// what a driver does to use the fastest replies of several requests.
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "framework/swarm.hpp"

using namespace std::chrono_literals;

int main() {
  swarm::application app;
  // A stand-in for a slow request: sleeps `ms` (stopping early once cancelled).
  auto slow = app.function("slow", [](swarm::context& ctx, long ms) {
    for (long waited = 0; waited < ms && !ctx.cancelled(); waited += 5)
      std::this_thread::sleep_for(5ms);
    return ms;
  });
  swarm::runtime_config cfg;
  cfg.cpus = 2;
  swarm::runtime rt{app, cfg};

  // `wait` returns once 2 of 4 are ready (or its timeout passes), each list in the order
  // given.
  std::vector<swarm::object_ref<long>> calls;
  for (long ms : {2000L, 10L, 5000L, 3000L})
    calls.push_back(rt.submit(slow, ms));
  auto some = rt.wait(calls, 2, 10s);
  std::printf("ready: %zu, pending: %zu\n", some.ready.size(), some.pending.size());

  // `when_any` is a future of the index of a call that is done (the first to finish, or
  // the first in the list of those done already), without blocking a thread.
  auto first = rt.when_any(calls).get(10s).value();
  std::printf("when_any: call %llu, of %ld ms\n", static_cast<unsigned long long>(first),
              calls[first].get().value());

  // Cancel what is still pending: a running task sees `cancelled()` and stops early, a
  // queued one never starts. Either way its future holds a `cancelled` error.
  size_t cancelled = 0;
  for (auto& r : some.pending) {
    rt.cancel(r);
    auto v = r.get(10s);
    if (!v && v.err().code == swarm::errc::cancelled) ++cancelled;
  }
  std::printf("cancelled %zu pending calls\n", cancelled);
  return some.ready.size() == 2 && calls[first].ready() &&
                 cancelled == some.pending.size()
             ? 0
             : 1;
}
