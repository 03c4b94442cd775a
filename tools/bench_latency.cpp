#include "tools/bench_latency.hpp"

#include <functional>
#include <vector>

#include "framework/swarm.hpp"
#include "tools/bench_floors.hpp"
#include "tools/bench_local.hpp"
#include "tools/bench_stats.hpp"

namespace swarm::tools {

namespace {

latency_options options_for(const bench_plan& p) {
  return {20, p.latency_calls, p.latency_cap};
}

/// Times `h.call(&bench_echo::echo_bytes, payload)` until its result is readable; the
/// result is read in place, not copied.
latency_stats echo_latency(const actor_handle<bench_echo>& h, size_t bytes,
                           const latency_options& opts) {
  const std::vector<uint8_t> payload(bytes, 'm');
  return measure_latency(
      [&] {
        auto back = h.call(&bench_echo::echo_bytes, payload).get_shared().value();
        check(back->size() == bytes, "echo call");
      },
      opts);
}

/// Each size measured `p.reps` times, the call and its floor alternating; the median of
/// each percentile.
latency_curve curve_of(const bench_plan& p, latency_curve c,
                       const std::function<latency_stats(size_t)>& call,
                       const std::function<latency_stats(size_t)>& floor) {
  for (size_t bytes : latency_sizes()) {
    std::vector<latency_stats> calls, floors;
    for (int r = 0; r < p.reps; ++r) {
      floors.push_back(floor(bytes));
      calls.push_back(call(bytes));
    }
    c.points.push_back({bytes, median_stats(calls), median_stats(floors)});
  }
  return c;
}

} // namespace

void measure_local_latency(bench_session& s, local_rig& rig) {
  if (!s.wants("latency_local")) return;
  auto& p = s.plan();
  auto opts = options_for(p);
  auto h = rig.rt.spawn(rig.fns.echo);
  s.add(curve_of(
      p,
      {"actor_call_latency_local",
       "caf_raw_latency_local",
       "in one process: actor call, argument and result of each size, vs bare CAF "
       "request",
       {}},
      [&](size_t bytes) { return echo_latency(h, bytes, opts); },
      [&](size_t bytes) { return rig.caf.payload_latency(bytes, opts); }));
}

latency_curve measure_remote_latency(const bench_plan& p,
                                     const actor_handle<bench_echo>& echo) {
  auto opts = options_for(p);
  return curve_of(
      p,
      {"actor_call_latency_remote",
       "tcp_floor_latency",
       "across two node processes: actor call vs bare TCP ping-pong of each size",
       {}},
      [&](size_t bytes) { return echo_latency(echo, bytes, opts); },
      [&](size_t bytes) {
        return summarize_latency(
            tcp_floor_round_trips(bytes, p.latency_calls, p.latency_cap));
      });
}

} // namespace swarm::tools
