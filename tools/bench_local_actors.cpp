// Actor-call workloads, named as in Ray's microbenchmark.

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "framework/swarm.hpp"
#include "tools/bench_local.hpp"
#include "tools/bench_stats.hpp"

namespace swarm::tools {

namespace {

constexpr size_t with_args_bytes = 1024;

/// Up to `n` calls of `method` to `actors` in turn, all sent before any result is read;
/// the count.
template <class M = int (bench_echo::*)(int)>
size_t call_batch(const std::vector<actor_handle<bench_echo>>& actors, size_t n,
                  std::chrono::milliseconds cap, M method = &bench_echo::ping) {
  std::vector<object_ref<int>> refs;
  refs.reserve(n);
  auto t0 = bench_clock::now();
  for (size_t i = 0; i < n && !past_cap(i, t0, cap); ++i)
    refs.push_back(actors[i % actors.size()].call(method, static_cast<int>(i)));
  for (size_t i = 0; i < refs.size(); ++i)
    check(refs[i].get().value() == static_cast<int>(i), "actor call batch");
  return refs.size();
}

/// Up to `n` calls to `actors` in turn, each waited for before the next; the count.
size_t call_one_by_one(const std::vector<actor_handle<bench_echo>>& actors, size_t n,
                       std::chrono::milliseconds cap) {
  auto t0 = bench_clock::now();
  size_t i = 0;
  for (; i < n && !past_cap(i, t0, cap); ++i)
    check(actors[i % actors.size()]
                  .call(&bench_echo::ping, static_cast<int>(i))
                  .get()
                  .value() == static_cast<int>(i),
          "sequential actor call");
  return i;
}

/// The round trip of a local call and the 1:1 sync rate, each repetition right after
/// one of bare CAF so that both see the machine in the same state.
void measure_round_trip(bench_session& s, local_rig& rig,
                        const actor_handle<bench_echo>& h) {
  auto& p = s.plan();
  std::vector<double> caf_p50, caf_rates, rates;
  double p50 = median_of_reps(p.reps, p.rtt_calls, [&](size_t n) {
    auto caf_t0 = bench_clock::now();
    auto raw = rig.caf.round_trips(n, p.cap);
    caf_rates.push_back(static_cast<double>(raw.size()) / seconds_since(caf_t0));
    caf_p50.push_back(median(std::move(raw)));
    std::vector<double> us;
    us.reserve(n);
    auto t0 = bench_clock::now();
    for (size_t i = 0; i < n && !past_cap(i, t0, p.cap); ++i) {
      auto start = bench_clock::now();
      auto got = h.call(&bench_echo::ping, static_cast<int>(i)).get().value();
      us.push_back(seconds_since(start) * 1e6);
      check(got == static_cast<int>(i), "actor call");
    }
    rates.push_back(static_cast<double>(us.size()) / seconds_since(t0));
    return median(std::move(us));
  });
  auto last_reps = [&](const std::vector<double>& xs) {
    return median(std::vector<double>(xs.end() - p.reps, xs.end()));
  };
  double caf_rtt =
      s.floor("caf_raw_local_rtt_p50_us", "us", [&] { return last_reps(caf_p50); });
  double caf_sync =
      s.floor("caf_raw_sync_per_s", "rt/s", [&] { return last_reps(caf_rates); });
  s.add({"local_actor_call_rtt_p50_us", p50, "us", "caf_raw_local_rtt_p50_us", caf_rtt,
         goal::ratio_at_most, 1.25, "<= 1.25x raw CAF"});
  s.add(versus("1_1_actor_calls_sync", last_reps(rates), "calls/s", "caf_raw_sync_per_s",
               caf_sync));
}

} // namespace

double caf_sync_floor(bench_session& s, local_rig& rig) {
  auto& p = s.plan();
  return s.floor("caf_raw_sync_per_s", "rt/s", [&] {
    return median_of_reps(p.reps, p.rtt_calls, [&](size_t n) {
      auto t0 = bench_clock::now();
      auto done = rig.caf.round_trips(n, p.cap).size();
      return static_cast<double>(done) / seconds_since(t0);
    });
  });
}

double caf_pipelined_floor(bench_session& s, local_rig& rig) {
  auto& p = s.plan();
  return s.floor("caf_raw_pipelined_per_s", "msg/s", [&] {
    return median_of_reps(p.reps, p.batch,
                          [&](size_t n) { return rig.caf.pipelined(n, p.cap); });
  });
}

// Three stages of empty work as a pipeline, beside the same chain of plain calls (each
// call taking the previous one's future), all items sent before any result is read.
void measure_pipeline(bench_session& s, local_rig& rig) {
  auto& p = s.plan();
  auto& echo_t = rig.fns.echo;
  std::vector<actor_handle<bench_echo>> chain{rig.rt.spawn(echo_t), rig.rt.spawn(echo_t),
                                              rig.rt.spawn(echo_t)};
  double floor = s.floor("actor_chain_3_calls_items_per_s", "items/s", [&] {
    return median_of_reps(p.reps, p.batch, [&](size_t n) {
      std::vector<object_ref<int>> outs;
      outs.reserve(n);
      auto t0 = bench_clock::now();
      for (size_t i = 0; i < n && !past_cap(i, t0, p.cap); ++i) {
        auto a = chain[0].call(&bench_echo::ping, static_cast<int>(i));
        auto b = chain[1].call(&bench_echo::ping, a);
        outs.push_back(chain[2].call(&bench_echo::ping, b));
      }
      for (size_t i = 0; i < outs.size(); ++i)
        check(outs[i].get().value() == static_cast<int>(i), "a chain of calls");
      return static_cast<double>(outs.size()) / seconds_since(t0);
    });
  });
  double rate = median_of_reps(p.reps, p.batch, [&](size_t n) {
    auto run = pipeline<int>{}
                   .then(echo_t, &bench_echo::ping)
                   .then(echo_t, &bench_echo::ping)
                   .then(echo_t, &bench_echo::ping)
                   .start(rig.rt, 1024);
    auto t0 = bench_clock::now();
    std::thread source{[&] {
      for (size_t i = 0; i < n && !past_cap(i, t0, p.cap); ++i)
        check(static_cast<bool>(run.push(static_cast<int>(i))), "pipeline push");
      run.close();
    }};
    size_t got = 0;
    while (auto out = run.next().value())
      check(*out == static_cast<int>(got++), "pipeline order");
    source.join();
    return static_cast<double>(got) / seconds_since(t0);
  });
  s.add(versus("pipeline_3_stages_items_per_s", rate, "items/s",
               "actor_chain_3_calls_items_per_s", floor));
}

long rss_kib() {
  return static_cast<long>(std::max<int64_t>(0, vm_bytes("VmRSS")) >> 10);
}

// A pipeline feeding 1 MiB items through a stage to a slow sink (1 ms an item), 16 in
// flight at most: the most bytes its objects held in the store at once, and how far the
// process's resident memory rose above where it started, less the freed values' memory
// the store keeps for reuse (its pool), beside the bytes the window holds.
void measure_slow_sink(bench_session& s, local_rig& rig) {
  constexpr size_t item_bytes = size_t{1} << 20, window = 16;
  size_t items = s.plan().batch >= 10'000 ? 400 : 100;
  auto& echo_t = rig.fns.echo;
  const std::vector<uint8_t> payload(item_bytes, 'p');
  double floor = s.floor("pipeline_window_mb", "MB",
                         [&] { return static_cast<double>(window * item_bytes) / 1e6; });
  auto run = pipeline<std::vector<uint8_t>>{}
                 .then(echo_t, &bench_echo::echo_bytes)
                 .then(echo_t, &bench_echo::slow_take)
                 .start(rig.rt, window);
  auto pooled_kib = [&] {
    return static_cast<long>(rig.rt.stats().store_pooled_bytes >> 10);
  };
  long base = rss_kib() - pooled_kib(), peak = base;
  size_t peak_store = 0;
  std::atomic<bool> done{false};
  std::thread watch{[&] {
    while (!done) {
      auto st = rig.rt.stats();
      peak_store = std::max(peak_store, st.store_bytes);
      peak = std::max(peak, rss_kib() - static_cast<long>(st.store_pooled_bytes >> 10));
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }};
  std::thread source{[&] {
    for (size_t i = 0; i < items; ++i)
      check(static_cast<bool>(run.push(payload)), "pipeline push");
    run.close();
  }};
  size_t got = 0;
  while (auto out = run.next().value()) {
    check(*out == static_cast<int64_t>(item_bytes), "slow sink");
    ++got;
  }
  source.join();
  done = true;
  watch.join();
  check(got == items, "every item through the slow sink");
  s.add(versus("pipeline_slow_sink_store_mb", static_cast<double>(peak_store) / 1e6, "MB",
               "pipeline_window_mb", floor));
  s.add(versus("pipeline_slow_sink_rss_mb", static_cast<double>(peak - base) / 1.024e3,
               "MB", "pipeline_window_mb", floor));
}

void measure_actor_calls(bench_session& s, local_rig& rig) {
  auto& p = s.plan();
  auto& echo_t = rig.fns.echo;
  std::vector<actor_handle<bench_echo>> one{rig.rt.spawn(echo_t)};
  std::vector<actor_handle<bench_echo>> many;
  for (size_t i = 0; i < bench_parallelism(); ++i)
    many.push_back(rig.rt.spawn(echo_t));

  if (s.wants("1_1_actor_calls_sync")) measure_round_trip(s, rig, one.front());

  if (s.wants("1_1_actor_calls_async"))
    s.add(versus("1_1_actor_calls_async",
                 median_of_reps(p.reps, p.batch,
                                [&](size_t n) {
                                  auto t0 = bench_clock::now();
                                  return static_cast<double>(call_batch(one, n, p.cap)) /
                                         seconds_since(t0);
                                }),
                 "calls/s", "caf_raw_pipelined_per_s", caf_pipelined_floor(s, rig)));

  // Ray's async actor: every method returns a future (there, a coroutine).
  if (s.wants("1_1_async_actor_calls_async"))
    s.add(versus("1_1_async_actor_calls_async",
                 median_of_reps(p.reps, p.batch,
                                [&](size_t n) {
                                  auto t0 = bench_clock::now();
                                  auto done =
                                      call_batch(one, n, p.cap, &bench_echo::ping_async);
                                  return static_cast<double>(done) / seconds_since(t0);
                                }),
                 "calls/s", "caf_raw_pipelined_per_s", caf_pipelined_floor(s, rig)));

  if (s.wants("1_1_actor_calls_with_args")) {
    double floor = s.floor("caf_raw_pipelined_1kib_per_s", "msg/s", [&] {
      return median_of_reps(p.reps, p.batch, [&](size_t n) {
        return rig.caf.pipelined(n, p.cap, with_args_bytes);
      });
    });
    const std::vector<uint8_t> payload(with_args_bytes, 'a');
    auto& h = one.front();
    double rate = median_of_reps(p.reps, p.batch, [&](size_t n) {
      std::vector<object_ref<int64_t>> refs;
      refs.reserve(n);
      auto t0 = bench_clock::now();
      for (size_t i = 0; i < n && !past_cap(i, t0, p.cap); ++i)
        refs.push_back(h.call(&bench_echo::take_bytes, payload));
      for (auto& r : refs)
        check(r.get().value() == static_cast<int64_t>(with_args_bytes), "call with args");
      return static_cast<double>(refs.size()) / seconds_since(t0);
    });
    s.add(versus("1_1_actor_calls_with_args", rate, "calls/s",
                 "caf_raw_pipelined_1kib_per_s", floor));
  }

  // Each call saves the actor's state (here empty) and, by default, keeps its answer in
  // that state so that a call sent again is not run twice; beside the same actor keeping
  // no answers (calls sent again run again): what exactly-once costs.
  if (s.wants("checkpointed_actor_calls_sync")) {
    actor_options kept;
    kept.checkpoint_every = 1;
    auto not_kept = kept;
    not_kept.answers_kept = 0;
    auto again = rig.rt.spawn(not_kept, echo_t);
    auto once = rig.rt.spawn(kept, echo_t);
    // Call by call, turn about, each call timed: both actors see the machine alike.
    auto time_call = [](actor_handle<bench_echo>& h, int x) {
      auto t0 = bench_clock::now();
      check(h.call(&bench_echo::ping, x).get().value() == x, "checkpointed actor call");
      return seconds_since(t0);
    };
    std::vector<double> at_least, exactly;
    auto rep = [&](size_t n) {
      double a = 0, b = 0;
      auto t0 = bench_clock::now();
      size_t i = 0;
      for (; i < n && !past_cap(i, t0, p.cap); ++i) {
        a += time_call(again, static_cast<int>(i));
        b += time_call(once, static_cast<int>(i));
      }
      at_least.push_back(static_cast<double>(i) / a);
      exactly.push_back(static_cast<double>(i) / b);
    };
    rep(std::max<size_t>(1, p.sync_ops / 4)); // a warm-up, not counted
    at_least.clear();
    exactly.clear();
    for (int i = 0; i < p.reps; ++i)
      rep(p.sync_ops);
    double floor = s.floor("checkpointed_calls_answers_not_kept_per_s", "calls/s",
                           [&] { return median(at_least); });
    s.add(versus("checkpointed_actor_calls_sync", median(exactly), "calls/s",
                 "checkpointed_calls_answers_not_kept_per_s", floor));
  }

  if (s.wants("1_n_actor_calls_sync"))
    s.add(versus("1_n_actor_calls_sync",
                 median_of_reps(p.reps, p.sync_ops,
                                [&](size_t n) {
                                  auto t0 = bench_clock::now();
                                  return static_cast<double>(
                                             call_one_by_one(many, n, p.cap)) /
                                         seconds_since(t0);
                                }),
                 "calls/s", "caf_raw_sync_per_s", caf_sync_floor(s, rig)));

  if (s.wants("1_n_actor_calls_async"))
    s.add(versus("1_n_actor_calls_async",
                 median_of_reps(p.reps, p.batch,
                                [&](size_t n) {
                                  auto t0 = bench_clock::now();
                                  return static_cast<double>(call_batch(many, n, p.cap)) /
                                         seconds_since(t0);
                                }),
                 "calls/s", "caf_raw_pipelined_per_s", caf_pipelined_floor(s, rig)));

  auto n_n = [&](bool sync) {
    return median_of_reps(p.reps, p.calls_per_caller, [&](size_t n) {
      std::atomic<size_t> next{0};
      return parallel_rate(many.size(), [&] {
        std::vector<actor_handle<bench_echo>> mine{many[next++]};
        return sync ? call_one_by_one(mine, n, p.cap) : call_batch(mine, n, p.cap);
      });
    });
  };
  if (s.wants("n_n_actor_calls_sync"))
    s.add(versus("n_n_actor_calls_sync", n_n(true), "calls/s", "caf_raw_sync_per_s",
                 caf_sync_floor(s, rig)));
  if (s.wants("n_n_actor_calls_async"))
    s.add(versus("n_n_actor_calls_async", n_n(false), "calls/s",
                 "caf_raw_pipelined_per_s", caf_pipelined_floor(s, rig)));

  if (s.wants("actors_created_per_s")) {
    double floor = s.floor("caf_raw_spawn_per_s", "actors/s", [&] {
      return median_of_reps(p.reps, p.actors_created,
                            [&](size_t n) { return rig.caf.spawn_rate(n, p.cap); });
    });
    double rate = median_of_reps(p.reps, p.actors_created, [&](size_t n) {
      std::vector<actor_handle<bench_echo>> created;
      created.reserve(n);
      auto t0 = bench_clock::now();
      for (size_t i = 0; i < n && !past_cap(i, t0, p.cap); ++i) {
        created.push_back(rig.rt.spawn(echo_t));
        check(created.back().call(&bench_echo::ping, 7).get().value() == 7, "new actor");
      }
      return static_cast<double>(created.size()) / seconds_since(t0);
    });
    s.add(versus("actors_created_per_s", rate, "actors/s", "caf_raw_spawn_per_s", floor));
  }

  if (s.wants("pipeline_3_stages")) measure_pipeline(s, rig);
  if (s.wants("pipeline_slow_sink_rss")) measure_slow_sink(s, rig);
}

} // namespace swarm::tools
