#include "tools/bench_local.hpp"

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "tools/bench_stats.hpp"

namespace swarm::tools {

namespace {

/// Round trips between two threads over a mutex and condition variable: the least a
/// call answered on another thread can cost. The p50 in µs.
double handoff_rtt_p50_us(const bench_plan& plan) {
  std::mutex mtx;
  std::condition_variable cv;
  int turn = 0; // 1: the peer's turn, 0: the caller's, -1: stop
  std::thread peer{[&] {
    std::unique_lock<std::mutex> lock{mtx};
    for (;;) {
      cv.wait(lock, [&] { return turn != 0; });
      if (turn < 0) return;
      turn = 0;
      cv.notify_all();
    }
  }};
  auto p50 = median_of_reps(plan.reps, plan.rtt_calls, [&](size_t n) {
    std::vector<double> us;
    us.reserve(n);
    auto t0 = bench_clock::now();
    for (size_t i = 0; i < n && !past_cap(i, t0, plan.cap); ++i) {
      auto s = bench_clock::now();
      std::unique_lock<std::mutex> lock{mtx};
      turn = 1;
      cv.notify_all();
      cv.wait(lock, [&] { return turn == 0; });
      lock.unlock();
      us.push_back(seconds_since(s) * 1e6);
    }
    return median(std::move(us));
  });
  {
    std::lock_guard<std::mutex> guard{mtx};
    turn = -1;
  }
  cv.notify_all();
  peer.join();
  return p50;
}

} // namespace

void measure_local(bench_session& s) {
  if (s.wants("thread_handoff"))
    s.floor("thread_handoff_rtt_p50_us", "us",
            [&] { return handoff_rtt_p50_us(s.plan()); });
  local_rig rig;
  measure_actor_calls(s, rig);
  measure_tasks(s, rig);
  measure_objects(s, rig);
  measure_local_latency(s, rig);
  measure_spilling(s);
  measure_gpu(s);
}

} // namespace swarm::tools
