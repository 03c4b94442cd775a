// Task workloads, named as in Ray's microbenchmark, and the 1,000-task fan-in DAG.

#include <chrono>
#include <thread>
#include <vector>

#include "framework/latency.hpp"
#include "framework/swarm.hpp"
#include "tools/bench_local.hpp"
#include "tools/bench_stats.hpp"

namespace swarm::tools {

namespace {

constexpr size_t wait_refs = 1000;
constexpr size_t dag_tasks = 1000 + 100 + 10 + 1;

/// Up to `n` tasks submitted, then every result read; the count.
size_t task_batch(local_rig& rig, size_t n, std::chrono::milliseconds cap) {
  std::vector<object_ref<int>> refs;
  refs.reserve(n);
  auto t0 = bench_clock::now();
  for (size_t i = 0; i < n && !past_cap(i, t0, cap); ++i)
    refs.push_back(rig.rt.submit(rig.fns.add, static_cast<int>(i), 1));
  for (size_t i = 0; i < refs.size(); ++i)
    check(refs[i].get().value() == static_cast<int>(i) + 1, "task batch");
  return refs.size();
}

double tasks_async_rate(bench_session& s, local_rig& rig) {
  auto& p = s.plan();
  return median_of_reps(p.reps, p.batch, [&](size_t n) {
    auto t0 = bench_clock::now();
    return static_cast<double>(task_batch(rig, n, p.cap)) / seconds_since(t0);
  });
}

/// The async task rate: measured by its own workload, or here when that one was
/// filtered out.
double async_rate(bench_session& s, local_rig& rig) {
  for (auto& r : s.rows())
    if (r.key == "single_client_tasks_async") return r.value;
  return s.floor("single_client_tasks_async_reference", "tasks/s",
                 [&] { return tasks_async_rate(s, rig); });
}

/// The p99 of `samples` tasks at `priority`, each submitted and read in turn, from submit
/// to result (us); with `load`, while low-priority 1 ms tasks, `4 * CPUs + 400` of them
/// queued at once, keep every CPU busy (the ones left are cancelled afterwards).
double priority_p99_us(local_rig& rig, size_t samples, int32_t priority, bool load) {
  std::vector<object_ref<int>> lows;
  if (load) {
    task_options low;
    low.priority = -1;
    auto cpus = static_cast<size_t>(rig.rt.total_resources().get("CPU"));
    for (size_t i = 0; i < 4 * cpus + 400; ++i)
      lows.push_back(rig.rt.submit(low, rig.fns.nap, 1));
  }
  task_options high;
  high.priority = priority;
  std::vector<double> us;
  for (size_t i = 0; i < samples; ++i) {
    auto t0 = bench_clock::now();
    check(rig.rt.submit(high, rig.fns.noop, static_cast<int>(i)).get().value() ==
              static_cast<int>(i),
          "a high-priority task");
    us.push_back(seconds_since(t0) * 1e6);
  }
  for (auto& l : lows)
    rig.rt.cancel(l);
  for (auto& l : lows)
    (void)l.get(); // done or cancelled: the node is idle again
  return summarize_latency(std::move(us)).p99;
}

/// 1,000 leaves reduced by a tree of ten-argument sums (100, 10, then 1 task); ms.
double fan_in_ms(local_rig& rig) {
  auto t0 = bench_clock::now();
  std::vector<object_ref<int>> level;
  level.reserve(1000);
  for (int i = 0; i < 1000; ++i)
    level.push_back(rig.rt.submit(rig.fns.noop, i));
  while (level.size() > 1) {
    std::vector<object_ref<int>> next;
    for (size_t j = 0; j < level.size(); j += 10) {
      auto* l = &level[j];
      next.push_back(rig.rt.submit(rig.fns.sum10, l[0], l[1], l[2], l[3], l[4], l[5],
                                   l[6], l[7], l[8], l[9]));
    }
    level = std::move(next);
  }
  auto total = level.front().get().value();
  auto ms = seconds_since(t0) * 1e3;
  check(total == 499'500, "fan-in");
  return ms;
}

/// Ray's `wait_multiple_refs`: 1,000 tasks submitted, then `wait` for one ready
/// reference at a time until none is left; runs per second.
double wait_1k_rate(bench_session& s, local_rig& rig) {
  auto& p = s.plan();
  return median_of_reps(p.reps, p.wait_runs, [&](size_t n) {
    auto t0 = bench_clock::now();
    size_t runs = 0;
    for (; runs < n && !(runs > 0 && bench_clock::now() - t0 > p.cap); ++runs) {
      std::vector<object_ref<int>> pending;
      pending.reserve(wait_refs);
      for (size_t i = 0; i < wait_refs; ++i)
        pending.push_back(rig.rt.submit(rig.fns.noop, static_cast<int>(i)));
      while (!pending.empty()) {
        auto w = rig.rt.wait(pending, 1, std::chrono::seconds(30));
        check(!w.ready.empty(), "wait for 1 of the pending references");
        pending = std::move(w.pending);
      }
    }
    return static_cast<double>(runs) / seconds_since(t0);
  });
}

} // namespace

void measure_tasks(bench_session& s, local_rig& rig) {
  auto& p = s.plan();
  if (s.wants("single_client_tasks_sync")) {
    double rate = median_of_reps(p.reps, p.sync_ops, [&](size_t n) {
      auto t0 = bench_clock::now();
      size_t i = 0;
      for (; i < n && !past_cap(i, t0, p.cap); ++i)
        check(rig.rt.submit(rig.fns.add, static_cast<int>(i), 1).get().value() ==
                  static_cast<int>(i) + 1,
              "task");
      return static_cast<double>(i) / seconds_since(t0);
    });
    s.add({"single_client_tasks_sync", rate, "tasks/s", "caf_raw_sync_per_s",
           caf_sync_floor(s, rig), goal::at_least, 100'000, ">= 100,000/s"});
  }

  if (s.wants("single_client_tasks_async"))
    s.add({"single_client_tasks_async", tasks_async_rate(s, rig), "tasks/s",
           "caf_raw_pipelined_per_s", caf_pipelined_floor(s, rig), goal::at_least,
           300'000, ">= 300,000/s"});

  if (s.wants("priority_high_p99_under_load_us")) {
    // A high-priority task starts on the node's reserve worker beside the running low
    // tasks, not after them or the hundreds queued before it.
    size_t samples = p.batch >= 10'000 ? 300 : 100;
    std::vector<double> idle, loaded;
    for (int r = 0; r < p.reps; ++r) {
      idle.push_back(priority_p99_us(rig, samples, 10, false));
      loaded.push_back(priority_p99_us(rig, samples, 10, true));
    }
    double floor =
        s.floor("priority_high_p99_idle_us", "us", [&] { return median(idle); });
    s.add(versus("priority_high_p99_under_load_us", median(loaded), "us",
                 "priority_high_p99_idle_us", floor));
  }

  if (s.wants("stream_items_per_s")) {
    // One streaming task writing n items, read as they come, beside n tasks submitted
    // at once and read.
    task_options o;
    o.stream_window = 1024;
    double rate = median_of_reps(p.reps, p.batch, [&](size_t n) {
      auto t0 = bench_clock::now();
      auto stream = rig.rt.submit(o, rig.fns.count, static_cast<int>(n));
      size_t got = 0;
      while (auto item = stream.next().value())
        check(item->get().value() == static_cast<int>(got++), "stream order");
      return static_cast<double>(got) / seconds_since(t0);
    });
    double ref =
        s.floor("tasks_async_items_per_s", "items/s", [&] { return async_rate(s, rig); });
    s.add(versus("stream_items_per_s", rate, "items/s", "tasks_async_items_per_s", ref));
  }

  if (s.wants("multi_client_tasks_async")) {
    double rate = median_of_reps(p.reps, p.calls_per_caller, [&](size_t n) {
      return parallel_rate(bench_parallelism(),
                           [&] { return task_batch(rig, n, p.cap); });
    });
    s.add(versus("multi_client_tasks_async", rate, "tasks/s", "caf_raw_pipelined_per_s",
                 caf_pipelined_floor(s, rig)));
  }

  if (s.wants("single_client_wait_1k_refs")) {
    double rate = wait_1k_rate(s, rig);
    double ref = s.floor("tasks_1k_at_async_rate_per_s", "runs/s", [&] {
      return async_rate(s, rig) / static_cast<double>(wait_refs);
    });
    s.add(versus("single_client_wait_1k_refs", rate, "runs/s",
                 "tasks_1k_at_async_rate_per_s", ref));
  }

  if (s.wants("dag_1000_fanin_ms")) {
    double ms = median_of_reps(p.reps, 1, [&](size_t) { return fan_in_ms(rig); });
    double ref = s.floor("dag_1000_fanin_at_async_rate_ms", "ms", [&] {
      return static_cast<double>(dag_tasks) / async_rate(s, rig) * 1e3;
    });
    s.add({"dag_1000_fanin_ms", ms, "ms", "dag_1000_fanin_at_async_rate_ms", ref,
           goal::at_most, 5, "<= 5 ms"});
  }

  // Ray's placement_group_create/removal: a group made, waited for until placed, and
  // removed, one after another (three round trips to the scheduler each).
  if (s.wants("placement_group_create_removal")) {
    placement_group_options one;
    one.bundles.push_back(resource_set::cpus(0.1));
    double rate = median_of_reps(p.reps, p.actors_created, [&](size_t n) {
      auto t0 = bench_clock::now();
      size_t i = 0;
      for (; i < n && !past_cap(i, t0, p.cap); ++i) {
        auto g = rig.rt.create_placement_group(one);
        check(g && g->wait(std::chrono::seconds(10)).has_value(), "placement group");
        check(rig.rt.remove_placement_group(*g).has_value(), "group removal");
      }
      return static_cast<double>(i) / seconds_since(t0);
    });
    double floor = s.floor("caf_raw_sync_per_s_by_3", "groups/s",
                           [&] { return caf_sync_floor(s, rig) / 3; });
    s.add(versus("placement_group_create_removal", rate, "groups/s",
                 "caf_raw_sync_per_s_by_3", floor));
  }

  // Memory given back: 1,000,000 tiny tasks (200,000 with --quick) submitted and read,
  // every ref held until all are done, then all dropped and the node left idle past its
  // trim (1 s); the process's resident memory then, beside where it started.
  if (s.wants("rss_after_tasks_idle_mib")) {
    size_t total = p.batch >= 10'000 ? 1'000'000 : 200'000;
    double before = s.floor("rss_before_tasks_mib", "MiB",
                            [&] { return static_cast<double>(rss_kib()) / 1024; });
    {
      std::vector<object_ref<int>> refs;
      refs.reserve(total);
      for (size_t i = 0; i < total; ++i)
        refs.push_back(rig.rt.submit(rig.fns.add, static_cast<int>(i), 1));
      for (size_t i = 0; i < total; ++i)
        check(refs[i].get().value() == static_cast<int>(i) + 1, "memory workload");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    s.add({"rss_after_tasks_idle_mib", static_cast<double>(rss_kib()) / 1024, "MiB",
           "rss_before_tasks_mib", before, goal::ratio_at_most, 2.0, "<= 2x the start"});
  }
}

} // namespace swarm::tools
