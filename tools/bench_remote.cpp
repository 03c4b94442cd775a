#include "tools/bench_remote.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>

#include "framework/swarm.hpp"
#include "tools/bench_broadcast.hpp"
#include "tools/bench_cluster.hpp"
#include "tools/bench_floors.hpp"
#include "tools/bench_latency.hpp"
#include "tools/bench_redundant.hpp"
#include "tools/bench_stats.hpp"
#include "tools/bench_workloads.hpp"

namespace swarm::tools {

namespace {

using namespace std::chrono_literals;

constexpr size_t transfer_bytes = size_t{100} << 20;
constexpr size_t floor_message_bytes = 128;

double nearest_rank_p99(std::vector<double> xs) {
  return summarize_latency(std::move(xs)).p99;
}

double tcp_rtt_p50_us(const bench_plan& p) {
  return median(tcp_floor_round_trips(floor_message_bytes, p.rtt_calls, 5s));
}

/// The TCP round-trip rate (1e6 / the floor's p50): measured once per run.
double tcp_round_trip_rate(bench_session& s) {
  auto& p = s.plan();
  double tcp = s.floor("tcp_floor_rtt_p50_us", "us", [&] {
    std::vector<double> p50s;
    for (int r = 0; r < p.reps; ++r)
      p50s.push_back(tcp_rtt_p50_us(p));
    return median(p50s);
  });
  return s.floor("tcp_floor_round_trips_per_s", "rt/s", [&] { return 1e6 / tcp; });
}

/// A batch of up to `p.remote_tasks` no-op tasks, the i-th pinned by `where(i)`, then
/// every result read; tasks per second.
double task_batch_rate(const bench_plan& p, runtime& rt, const bench_fns& fns,
                       const std::function<const task_options&(size_t)>& where) {
  std::vector<object_ref<int>> refs;
  refs.reserve(p.remote_tasks);
  auto t0 = bench_clock::now();
  for (size_t i = 0; i < p.remote_tasks && !past_cap(i, t0, p.cap); ++i)
    refs.push_back(rt.submit(where(i), fns.noop, static_cast<int>(i)));
  for (size_t i = 0; i < refs.size(); ++i)
    check(refs[i].get(30s).value() == static_cast<int>(i), "remote task");
  return static_cast<double>(refs.size()) / seconds_since(t0);
}

/// Each repetition right after one of the TCP floor, so that both see the machine (and
/// its bimodal cross-vCPU wake-ups) in the same state.
void measure_remote_calls(bench_session& s, const actor_handle<bench_echo>& echo) {
  auto& p = s.plan();
  s.floor("caf_raw_remote_rtt_p50_us", "us", [&] {
    std::vector<double> p50s;
    for (int r = 0; r < p.reps; ++r)
      p50s.push_back(
          median(caf_remote_round_trips(std::min<size_t>(p.rtt_calls, 2'000), 5s)));
    return median(p50s);
  });
  std::vector<double> tcp_p50s, p50s, p99s, sync_rates, async_rates;
  for (int r = 0; r < p.reps; ++r) {
    tcp_p50s.push_back(tcp_rtt_p50_us(p));
    std::vector<double> us;
    us.reserve(p.rtt_calls);
    auto t0 = bench_clock::now();
    for (size_t i = 0; i < p.rtt_calls && !past_cap(i, t0, p.cap); ++i) {
      auto start = bench_clock::now();
      check(echo.call(&bench_echo::ping, static_cast<int>(i)).get(10s).value() ==
                static_cast<int>(i),
            "remote actor call");
      us.push_back(seconds_since(start) * 1e6);
    }
    sync_rates.push_back(static_cast<double>(us.size()) / seconds_since(t0));
    p50s.push_back(median(us));
    p99s.push_back(nearest_rank_p99(std::move(us)));

    std::vector<object_ref<int>> refs;
    refs.reserve(p.remote_pipelined);
    t0 = bench_clock::now();
    for (size_t i = 0; i < p.remote_pipelined && !past_cap(i, t0, p.cap); ++i)
      refs.push_back(echo.call(&bench_echo::ping, static_cast<int>(i)));
    for (size_t i = 0; i < refs.size(); ++i)
      check(refs[i].get(30s).value() == static_cast<int>(i), "pipelined remote call");
    async_rates.push_back(static_cast<double>(refs.size()) / seconds_since(t0));
  }
  double tcp = s.floor("tcp_floor_rtt_p50_us", "us", [&] { return median(tcp_p50s); });
  s.floor("tcp_floor_round_trips_per_s", "rt/s", [&] { return 1e6 / tcp; });
  s.add({"remote_actor_call_rtt_p50_us", median(p50s), "us", "tcp_floor_rtt_p50_us", tcp,
         goal::ratio_at_most, 1.5, "<= 1.5x TCP"});
  s.add(versus("remote_actor_call_rtt_p99_us", median(p99s), "us", "tcp_floor_rtt_p50_us",
               tcp));
  s.add(versus("remote_1_1_actor_calls_sync", median(sync_rates), "calls/s",
               "tcp_floor_round_trips_per_s", 1e6 / tcp));
  s.add({"remote_1_1_actor_calls_async", median(async_rates), "calls/s",
         "tcp_floor_round_trips_per_s", 1e6 / tcp, goal::at_least, 80'000,
         ">= 80,000/s"});
}

/// With more than two nodes: one caller thread per other node, each pipelining calls to
/// its own actor there, and a batch of tasks spread evenly over the other nodes.
void measure_spread(bench_session& s, cluster_nodes& c, int nodes) {
  auto& p = s.plan();
  auto& rt = *c.rt;
  std::vector<actor_handle<bench_echo>> echoes;
  std::vector<task_options> on;
  for (int i = 1; i < nodes; ++i) {
    actor_options a;
    a.node = cluster_nodes::name_of(i);
    echoes.push_back(rt.spawn(a, c.fns.echo));
    task_options t;
    t.node = a.node;
    on.push_back(t);
  }
  auto callers = echoes.size();
  auto per_caller = std::max<size_t>(1, p.remote_pipelined / callers);
  std::vector<double> call_rates, task_rates;
  for (int r = 0; r < p.reps; ++r) {
    std::vector<size_t> done(callers, 0);
    auto t0 = bench_clock::now();
    std::vector<std::thread> threads;
    for (size_t k = 0; k < callers; ++k)
      threads.emplace_back([&, k] {
        std::vector<object_ref<int>> refs;
        refs.reserve(per_caller);
        auto start = bench_clock::now();
        for (size_t i = 0; i < per_caller && !past_cap(i, start, p.cap); ++i)
          refs.push_back(echoes[k].call(&bench_echo::ping, static_cast<int>(i)));
        for (size_t i = 0; i < refs.size(); ++i)
          check(refs[i].get(30s).value() == static_cast<int>(i), "n:n remote call");
        done[k] = refs.size();
      });
    for (auto& t : threads)
      t.join();
    size_t calls = 0;
    for (auto d : done)
      calls += d;
    call_rates.push_back(static_cast<double>(calls) / seconds_since(t0));
    task_rates.push_back(
        task_batch_rate(p, rt, c.fns, [&](size_t i) -> const task_options& {
          return on[i % on.size()];
        }));
  }
  double tcp_rate = tcp_round_trip_rate(s);
  s.add(versus("remote_n_nodes_actor_calls_async", median(call_rates), "calls/s",
               "tcp_floor_round_trips_per_s", tcp_rate));
  s.add(versus("remote_n_nodes_tasks_async", median(task_rates), "tasks/s",
               "tcp_floor_round_trips_per_s", tcp_rate));
  // Tasks n2 cannot run, spilled by n2 to n3, beside the same tasks pinned to n3.
  task_options on_n2;
  on_n2.node = cluster_nodes::name_of(1);
  auto target = cluster_nodes::name_of(2);
  auto n = static_cast<int>(std::max<size_t>(100, p.remote_tasks / 4));
  std::vector<double> spilled, pinned;
  for (int r = 0; r < p.reps; ++r) {
    auto pinned_us = rt.submit(on_n2, c.fns.fan_out, n, target, true).get(60s).value();
    auto spilled_us = rt.submit(on_n2, c.fns.fan_out, n, target, false).get(60s).value();
    pinned.push_back(n * 1e6 / static_cast<double>(std::max<int64_t>(1, pinned_us)));
    spilled.push_back(n * 1e6 / static_cast<double>(std::max<int64_t>(1, spilled_us)));
  }
  double floor = s.floor("pinned_tasks_from_a_worker_per_s", "tasks/s",
                         [&] { return median(pinned); });
  s.add(versus("spilled_tasks_from_a_worker_per_s", median(spilled), "tasks/s",
               "pinned_tasks_from_a_worker_per_s", floor));
}

/// The longest time the head went without hearing from n2 (its `last_seen_ms` in the
/// head's table, read every 10 ms through `swarm status`'s request) while `more`.
double longest_silence_ms(runtime& rt, const std::function<bool()>& more) {
  double longest = 0;
  while (more()) {
    if (auto st = cluster_status(*rt.cluster(), 1s))
      for (auto& n : st->nodes)
        if (n.name == "n2")
          longest = std::max(longest, static_cast<double>(n.last_seen_ms));
    std::this_thread::sleep_for(10ms);
  }
  return longest;
}

/// Remote call latency and heartbeat gaps while bulk data moves between the same two
/// nodes: sync calls to the echo on n2, then (in a second round, so that reading the
/// table does not load the calls) n2's silence as the head sees it; each idle, and while
/// 100 MB objects (1 GB in all; 400 MB with --quick) are read by tasks on n2 one after
/// another.
void measure_calls_during_bulk(bench_session& s, runtime& rt, const bench_fns& fns,
                               const actor_handle<bench_echo>& echo,
                               const task_options& on_n2) {
  auto& p = s.plan();
  auto sample = [&](const std::function<bool()>& more) {
    std::vector<double> us;
    for (int i = 0; more() && i < 200'000; ++i) {
      auto start = bench_clock::now();
      check(echo.call(&bench_echo::ping, i).get(10s).value() == i, "remote call");
      us.push_back(seconds_since(start) * 1e6);
    }
    return us;
  };
  // Runs `during` while the objects move; `during` gets whether they still do.
  auto while_moving =
      [&](const std::function<void(const std::function<bool()>&)>& during) {
        std::atomic<bool> moving{true};
        int objects = p.transfers > 2 ? 10 : 4;
        std::thread bulk{[&] {
          for (int r = 0; r < objects; ++r) {
            auto big =
                rt.put(std::vector<uint8_t>(transfer_bytes, static_cast<uint8_t>(r)));
            check(rt.submit(on_n2, fns.byte_count, big).get(60s).value() ==
                      static_cast<int64_t>(transfer_bytes),
                  "bulk transfer under calls");
          }
          moving = false;
        }};
        during([&] { return moving.load(); });
        bulk.join();
      };
  int calls = 0;
  auto idle = sample([&] { return calls++ < 2000; });
  std::vector<double> busy;
  while_moving([&](const std::function<bool()>& moving) { busy = sample(moving); });
  check(!busy.empty(), "calls during bulk");
  auto idle_until = bench_clock::now() + 1s;
  double idle_silence =
      longest_silence_ms(rt, [&] { return bench_clock::now() < idle_until; });
  double busy_silence = 0;
  while_moving([&](const std::function<bool()>& moving) {
    busy_silence = longest_silence_ms(rt, moving);
  });
  double idle_p99 =
      s.floor("remote_call_p99_idle_us", "us", [&] { return nearest_rank_p99(idle); });
  s.add({"remote_call_p99_during_bulk_us", nearest_rank_p99(std::move(busy)), "us",
         "remote_call_p99_idle_us", idle_p99, goal::ratio_at_most, 2.0, "<= 2x idle"});
  double idle_gap = s.floor("heartbeat_gap_idle_ms", "ms", [&] { return idle_silence; });
  s.add(versus("heartbeat_gap_during_bulk_ms", busy_silence, "ms",
               "heartbeat_gap_idle_ms", idle_gap));
}

// Peak resident memory of `n2` while it pulls an object of about 500 MB, beyond what it
// held before, against the object's size. Each read is cold: the objects grow by 30%
// from one to the next, so none fits the memory n2's pool kept from the one before (a
// warm read grows nothing). Scaled to a 500 MB object.
void measure_read_peak_rss(bench_session& s, runtime& rt, const bench_fns& fns,
                           const task_options& on_n2) {
  constexpr size_t object_bytes = size_t{500} << 20;
  double mb = s.floor("remote_read_object_mb", "MB",
                      [] { return static_cast<double>(object_bytes) / 1e6; });
  std::vector<double> peaks;
  auto bytes = object_bytes;
  for (int r = 0; r < 3; ++r, bytes += bytes * 3 / 10) {
    auto big = rt.put(std::vector<uint8_t>(bytes, static_cast<uint8_t>(r)));
    auto before = rt.submit(on_n2, fns.reset_peak_rss, 0).get(60s).value();
    auto peak = rt.submit(on_n2, fns.peak_rss_with, big).get(120s).value();
    check(before > 0 && peak > 0, "reading n2's resident memory from /proc");
    peaks.push_back(static_cast<double>(peak - before) / static_cast<double>(bytes) * mb);
  }
  s.add({"remote_read_peak_rss_mb", median(peaks), "MB", "remote_read_object_mb", mb,
         goal::ratio_at_most, 1.1, "<= 1.1x the object"});
}

stage_options stage_on(const std::string& node) {
  stage_options o;
  o.nodes = {node};
  return o;
}

/// Three stages of empty work on three nodes (head, n2, n3) as a pipeline, beside the
/// same actors called as a chain of plain calls, each taking the previous one's future.
void measure_remote_pipeline(bench_session& s, runtime& rt, const bench_fns& fns) {
  auto& p = s.plan();
  const std::vector<std::string> nodes{"head", "n2", "n3"};
  size_t items = p.remote_pipelined / 10;
  std::vector<actor_handle<bench_echo>> chain;
  for (auto& n : nodes) {
    actor_options o;
    o.node = n;
    chain.push_back(rt.spawn(o, fns.echo));
  }
  std::vector<double> chained, piped;
  for (int r = 0; r < p.reps; ++r) {
    std::vector<object_ref<int>> outs;
    auto t0 = bench_clock::now();
    for (size_t i = 0; i < items; ++i) {
      auto a = chain[0].call(&bench_echo::ping, static_cast<int>(i));
      auto b = chain[1].call(&bench_echo::ping, a);
      outs.push_back(chain[2].call(&bench_echo::ping, b));
    }
    for (size_t i = 0; i < outs.size(); ++i)
      check(outs[i].get(60s).value() == static_cast<int>(i), "a chain across nodes");
    chained.push_back(static_cast<double>(items) / seconds_since(t0));

    auto built = pipeline<int>{};
    auto three = built.then(fns.echo, &bench_echo::ping, stage_on(nodes[0]))
                     .then(fns.echo, &bench_echo::ping, stage_on(nodes[1]))
                     .then(fns.echo, &bench_echo::ping, stage_on(nodes[2]));
    auto run = three.start(rt, 1024);
    t0 = bench_clock::now();
    std::thread source{[&] {
      for (size_t i = 0; i < items; ++i)
        check(static_cast<bool>(run.push(static_cast<int>(i), 60s)), "pipeline push");
      run.close();
    }};
    size_t got = 0;
    while (auto out = run.next(60s).value())
      check(*out == static_cast<int>(got++), "pipeline order across nodes");
    source.join();
    piped.push_back(static_cast<double>(got) / seconds_since(t0));
  }
  double floor = s.floor("remote_actor_chain_3_nodes_items_per_s", "items/s",
                         [&] { return median(chained); });
  s.add(versus("remote_pipeline_3_nodes_items_per_s", median(piped), "items/s",
               "remote_actor_chain_3_nodes_items_per_s", floor));
}

// A streaming task on n2 writing its items to the head, read as they come, beside as
// many tasks submitted to n2 at once and read.
void measure_remote_stream(bench_session& s, runtime& rt, const bench_fns& fns,
                           const task_options& on_n2) {
  auto& p = s.plan();
  auto streaming = on_n2;
  streaming.stream_window = 1024;
  std::vector<double> tasks, streamed;
  for (int r = 0; r < p.reps; ++r) {
    tasks.push_back(task_batch_rate(
        p, rt, fns, [&](size_t) -> const task_options& { return on_n2; }));
    auto t0 = bench_clock::now();
    auto stream = rt.submit(streaming, fns.count, static_cast<int>(p.remote_pipelined));
    size_t got = 0;
    while (auto item = stream.next(60s).value())
      check(item->get(60s).value() == static_cast<int>(got++),
            "stream order across nodes");
    streamed.push_back(static_cast<double>(got) / seconds_since(t0));
  }
  double floor =
      s.floor("remote_tasks_async_items_per_s", "items/s", [&] { return median(tasks); });
  s.add(versus("remote_stream_items_per_s", median(streamed), "items/s",
               "remote_tasks_async_items_per_s", floor));
}

// The p99 round trip of calls to an echo actor on n2, each made while 4,000 calls with
// 16 KiB arguments (64 MB on the call lane, more than the kernel's socket buffers hold)
// were just sent to another actor there: plain calls wait behind them all,
// latency-critical ones go on the control lane, behind only what the kernel holds.
void measure_urgent_calls(bench_session& s, runtime& rt, const bench_fns& fns) {
  actor_options on_n2;
  on_n2.node = "n2";
  auto target = rt.spawn(on_n2, fns.echo);
  auto sink = rt.spawn(on_n2, fns.echo);
  const std::vector<uint8_t> payload(16 << 10, 'f');
  int samples = s.plan().batch >= 10'000 ? 30 : 10;
  auto p99_of = [&](const actor_handle<bench_echo>& h) {
    std::vector<double> us;
    for (int i = 0; i < samples; ++i) {
      std::vector<object_ref<int64_t>> flood;
      for (int j = 0; j < 4000; ++j)
        flood.push_back(sink.call(&bench_echo::take_bytes, payload));
      auto t0 = bench_clock::now();
      check(h.call(&bench_echo::ping, i).get(60s).value() == i, "a call beside a flood");
      us.push_back(seconds_since(t0) * 1e6);
      for (auto& f : flood)
        check(f.get(60s).value() == 16 << 10, "a flooding call");
    }
    return nearest_rank_p99(std::move(us));
  };
  std::vector<double> plain, urgent;
  for (int r = 0; r < s.plan().reps; ++r) {
    plain.push_back(p99_of(target));
    urgent.push_back(p99_of(target.latency_critical()));
  }
  double floor = s.floor("remote_call_p99_beside_64mb_of_calls_us", "us",
                         [&] { return median(plain); });
  s.add(versus("remote_latency_critical_call_p99_beside_64mb_of_calls_us", median(urgent),
               "us", "remote_call_p99_beside_64mb_of_calls_us", floor));
}

} // namespace

void measure_remote(bench_session& s, int nodes) {
  bool calls = s.wants("remote_actor_calls");
  bool tasks = s.wants("remote_single_client_tasks_async");
  bool transfer = s.wants("remote_transfer_gigabytes") || s.wants("remote_reread_us");
  bool during_bulk = s.wants("remote_call_p99_during_bulk_us");
  bool latency = s.wants("latency_remote");
  bool spread = nodes > 2 && s.wants("remote_n_nodes");
  bool rss = s.wants("remote_read_peak_rss_mb");
  bool broadcast = nodes > 2 && (s.wants("broadcast_100mb") || s.wants("pull_2_holders"));
  bool redundant = nodes > 2 && s.wants("redundant_task_node_killed");
  bool piped = nodes > 2 && s.wants("remote_pipeline_3_nodes");
  bool streamed = s.wants("remote_stream_items");
  bool urgent = s.wants("remote_latency_critical");
  bool elastic = nodes > 2 && (s.wants("elastic_join") || s.wants("autoscale_up") ||
                               s.wants("drain_seconds"));
  if (!calls && !tasks && !transfer && !during_bulk && !latency && !spread && !rss &&
      !broadcast && !redundant && !piped && !streamed && !urgent && !elastic)
    return;
  auto& p = s.plan();

  char dir_tmpl[] = "/tmp/swarm-bench-XXXXXX";
  if (::mkdtemp(dir_tmpl) == nullptr)
    throw std::runtime_error("cannot create a temporary folder under /tmp");
  std::string dir = dir_tmpl;
  std::unique_ptr<cluster_nodes> cluster;
  try {
    cluster = std::make_unique<cluster_nodes>(dir, nodes);
  } catch (...) {
    ::rmdir(dir.c_str());
    throw;
  }
  auto& rt = *cluster->rt;

  actor_options on_n2;
  on_n2.node = "n2";
  task_options task_on_n2;
  task_on_n2.node = "n2";
  auto echo = rt.spawn(on_n2, cluster->fns.echo);
  for (int i = 0; i < 200; ++i)
    echo.call(&bench_echo::ping, i).get(10s).value();

  if (calls) measure_remote_calls(s, echo);

  if (tasks) {
    std::vector<double> rates;
    for (int r = 0; r < p.reps; ++r)
      rates.push_back(
          task_batch_rate(p, rt, cluster->fns,
                          [&](size_t) -> const task_options& { return task_on_n2; }));
    s.add(versus("remote_single_client_tasks_async", median(rates), "tasks/s",
                 "tcp_floor_round_trips_per_s", tcp_round_trip_rate(s)));
  }

  if (transfer) {
    double stream = s.floor("tcp_floor_gigabytes", "GB/s", [&] {
      std::vector<double> rates;
      for (int r = 0; r < p.transfers; ++r)
        rates.push_back(tcp_stream_gigabytes(transfer_bytes));
      return median(rates);
    });
    double into_buffer = s.floor("tcp_floor_into_buffer_gigabytes", "GB/s", [&] {
      std::vector<double> rates;
      for (int r = 0; r < p.transfers; ++r)
        rates.push_back(tcp_stream_gigabytes(transfer_bytes, stream_into::ready_buffer));
      return median(rates);
    });
    double into_fresh = s.floor("tcp_floor_into_fresh_gigabytes", "GB/s", [&] {
      std::vector<double> rates;
      for (int r = 0; r < p.transfers; ++r)
        rates.push_back(tcp_stream_gigabytes(transfer_bytes, stream_into::fresh_buffer));
      return median(rates);
    });
    // 100 MB objects one after another, each freed on the head after its transfer: n2
    // drops its copy into its store's pool, and the next pull lands in that memory. Cold
    // transfers make their value in fresh memory, warm ones in kept memory; told apart by
    // n2's pool reuses, read from its next heartbeat.
    auto n2_pool_reuses = [&] {
      std::this_thread::sleep_for(150ms); // three heartbeats
      for (auto& n : cluster_status(cluster->cfg, 5s).value().nodes)
        if (n.name == "n2") return n.pool_reuses;
      throw std::runtime_error("node 'n2' is not in the head's table");
    };
    std::vector<double> cold, warm, rereads, small_tasks;
    auto small = rt.put(std::vector<uint8_t>(64, 1)); // travels inline
    auto reuses = n2_pool_reuses();
    for (int r = 0; r < p.transfers + 6 && static_cast<int>(warm.size()) < p.transfers;
         ++r) {
      auto big = rt.put(std::vector<uint8_t>(transfer_bytes, static_cast<uint8_t>(r)));
      auto t0 = bench_clock::now();
      auto n = rt.submit(task_on_n2, cluster->fns.byte_count, big).get(60s).value();
      double rate = static_cast<double>(transfer_bytes) / seconds_since(t0) / 1e9;
      check(n == static_cast<int64_t>(transfer_bytes), "100 MB transfer (wrong size)");
      // Read again on n2, after the first reader let go: its kept copy, nothing moves.
      t0 = bench_clock::now();
      n = rt.submit(task_on_n2, cluster->fns.byte_count, big).get(60s).value();
      rereads.push_back(seconds_since(t0) * 1e6);
      check(n == static_cast<int64_t>(transfer_bytes), "100 MB reread (wrong size)");
      t0 = bench_clock::now();
      check(rt.submit(task_on_n2, cluster->fns.byte_count, small).get(60s).value() == 64,
            "remote task with a small argument");
      small_tasks.push_back(seconds_since(t0) * 1e6);
      auto now = n2_pool_reuses();
      (now > reuses ? warm : cold).push_back(rate);
      reuses = now;
    }
    check(
        !cold.empty() && !warm.empty(),
        "100 MB transfers: n2 never pulled into fresh memory, or never into kept memory");
    s.add({"remote_transfer_gigabytes", median(warm), "GB/s", "tcp_floor_gigabytes",
           stream, goal::ratio_at_least, 0.8, ">= 0.8x TCP"});
    s.add({"remote_transfer_gigabytes_vs_buffer", median(warm), "GB/s",
           "tcp_floor_into_buffer_gigabytes", into_buffer, goal::ratio_at_least, 0.8,
           ">= 0.8x TCP into a buffer"});
    s.add(versus("remote_transfer_cold_gigabytes", median(cold), "GB/s",
                 "tcp_floor_gigabytes", stream));
    // What bounds a cold pull: memory that is not there yet.
    s.add(versus("remote_transfer_cold_gigabytes_vs_fresh", median(cold), "GB/s",
                 "tcp_floor_into_fresh_gigabytes", into_fresh));
    // One object of 1 GB, cold; with more than --quick a second, warm when n2's pool
    // kept the first's memory (it takes a quarter of n2's store).
    std::vector<double> large_cold, large_warm;
    for (int r = 0; r < (p.transfers > 2 ? 2 : 1); ++r) {
      auto big =
          rt.put(std::vector<uint8_t>(10 * transfer_bytes, static_cast<uint8_t>(r)));
      auto t0 = bench_clock::now();
      auto n = rt.submit(task_on_n2, cluster->fns.byte_count, big).get(120s).value();
      double rate = static_cast<double>(10 * transfer_bytes) / seconds_since(t0) / 1e9;
      check(n == static_cast<int64_t>(10 * transfer_bytes), "1 GB transfer (wrong size)");
      big = {};
      auto now = n2_pool_reuses();
      (now > reuses ? large_warm : large_cold).push_back(rate);
      reuses = now;
    }
    check(!large_cold.empty(), "1 GB transfer: n2 never pulled into fresh memory");
    s.add({"remote_transfer_1gb_gigabytes", median(large_cold), "GB/s",
           "tcp_floor_gigabytes", stream, goal::ratio_at_least, 0.8, ">= 0.8x TCP"});
    if (!large_warm.empty())
      s.add(versus("remote_transfer_1gb_warm_gigabytes", median(large_warm), "GB/s",
                   "tcp_floor_gigabytes", stream));
    double small_us =
        s.floor("remote_small_task_us", "us", [&] { return median(small_tasks); });
    s.add(versus("remote_reread_us", median(rereads), "us", "remote_small_task_us",
                 small_us));
  }

  if (rss) measure_read_peak_rss(s, rt, cluster->fns, task_on_n2);
  if (during_bulk) measure_calls_during_bulk(s, rt, cluster->fns, echo, task_on_n2);
  if (latency) s.add(measure_remote_latency(p, echo));
  if (spread) measure_spread(s, *cluster, nodes);
  if (broadcast) measure_broadcast(s, *cluster, nodes);
  if (piped) measure_remote_pipeline(s, rt, cluster->fns);
  if (streamed) measure_remote_stream(s, rt, cluster->fns, task_on_n2);
  if (urgent) measure_urgent_calls(s, rt, cluster->fns);
  if (elastic) measure_elastic(s, *cluster, nodes);     // it kills and starts n2
  if (redundant) measure_redundant(s, *cluster, nodes); // last: it kills nodes
}

} // namespace swarm::tools
