// `swarm bench`: measures a single-node runtime beside floors taken in the same run.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <caf/all.hpp>

#include "framework/swarm.hpp"
#include "tools/bench_remote.hpp"
#include "tools/bench_report.hpp"
#include "tools/command.hpp"

namespace swarm::tools {

namespace {

using bench_clock = std::chrono::steady_clock;

constexpr size_t big_object_bytes = size_t{100} << 20;

/// What the command line asked for.
struct bench_options {
  int nodes = 1;
  bool quick = false;
  std::string json_path;
};

/// Repetitions and operation counts of every phase; each repetition also stops at `cap`.
struct bench_plan {
  int reps;
  size_t rtt_calls;
  size_t sync_ops;
  size_t batch;
  size_t n_n_calls_per_caller;
  size_t put_ops;
  size_t get_ops;
  size_t big_gets;
  std::chrono::milliseconds cap;
};

bench_plan plan_for(bool quick) {
  if (quick)
    return {3,       5'000,  5'000,
            20'000,  10'000, 50'000,
            200'000, 100,    std::chrono::milliseconds(400)};
  return {5,       10'000, 10'000,
          50'000,  20'000, 100'000,
          500'000, 200,    std::chrono::milliseconds(2'000)};
}

double seconds_since(bench_clock::time_point t0) {
  return std::chrono::duration<double>(bench_clock::now() - t0).count();
}

double median(std::vector<double> xs) {
  if (xs.empty()) return 0;
  std::sort(xs.begin(), xs.end());
  auto n = xs.size();
  return n % 2 == 1 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

/// Runs `rep(n)` once as a warm-up with a quarter of the operations, then `reps` times,
/// and returns the median of what the measured runs returned.
double median_of_reps(int reps, size_t n, const std::function<double(size_t)>& rep) {
  rep(std::max<size_t>(1, n / 4));
  std::vector<double> xs;
  for (int i = 0; i < reps; ++i)
    xs.push_back(rep(n));
  return median(xs);
}

/// Whether a loop that started at `t0` has run past `cap`; checked every 64 operations.
bool past_cap(size_t i, bench_clock::time_point t0, std::chrono::milliseconds cap) {
  return (i & 63) == 63 && bench_clock::now() - t0 > cap;
}

void check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string{"wrong result in "} + what);
}

// -- floors measured with bare CAF
// -------------------------------------------------------

/// The bare-CAF equivalents of a local actor call.
struct caf_floor {
  double rtt_p50_us = 0;
  double sync_per_s = 0;
  double pipelined_per_s = 0;
};

/// A bare CAF system with the scheduler settings Swarm uses, an actor that replies with
/// its argument, and a blocking caller: the floor of a local actor call.
class caf_echo_rig {
public:
  caf_echo_rig()
      : sys_{configured(cfg_)}, echo_{sys_.spawn(
                                    [](caf::event_based_actor*) -> caf::behavior {
                                      return {[](int x) { return x; }};
                                    })},
        self_{sys_} {}

  ~caf_echo_rig() { self_->send_exit(echo_, caf::exit_reason::user_shutdown); }

  caf_echo_rig(const caf_echo_rig&) = delete;
  caf_echo_rig& operator=(const caf_echo_rig&) = delete;

  /// Up to `n` sequential blocking requests; the round trip of each in µs.
  std::vector<double> round_trips(size_t n, std::chrono::milliseconds cap) {
    std::vector<double> us;
    us.reserve(n);
    auto t0 = bench_clock::now();
    for (size_t i = 0; i < n && !past_cap(i, t0, cap); ++i) {
      auto s = bench_clock::now();
      int got = -1;
      self_->request(echo_, caf::infinite, static_cast<int>(i))
          .receive([&](int x) { got = x; }, [&](caf::error&) {});
      us.push_back(seconds_since(s) * 1e6);
      check(got == static_cast<int>(i), "caf raw request");
    }
    return us;
  }

  /// Up to `n` messages sent at once, then every reply received; messages per second.
  double pipelined(size_t n, std::chrono::milliseconds cap) {
    auto t0 = bench_clock::now();
    size_t sent = 0;
    for (; sent < n && !past_cap(sent, t0, cap); ++sent)
      self_->send(echo_, static_cast<int>(sent));
    size_t received = 0;
    self_->receive_for(received, sent)([](int) {});
    return static_cast<double>(sent) / seconds_since(t0);
  }

private:
  static caf::actor_system_config& configured(caf::actor_system_config& cfg) {
    cfg.set("scheduler.policy", caf::atom("sharing"));
    cfg.set("scheduler.max-threads",
            std::max<size_t>(2, std::thread::hardware_concurrency()));
    return cfg;
  }

  caf::actor_system_config cfg_;
  caf::actor_system sys_;
  caf::actor echo_;
  caf::scoped_actor self_;
};

/// Floors for the object phases, and the cost of handing work to another thread and back.
struct memory_floor {
  double handoff_rtt_p50_us = 0;
  double memcpy_100mb_us = 0;
  double make_shared_per_s = 0;
  double shared_ptr_copy_per_s = 0;
};

/// Round trips between two threads over a mutex and condition variable: the least a
/// call answered on another thread can cost.
double measure_handoff(const bench_plan& plan) {
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

memory_floor measure_memory(const bench_plan& plan) {
  memory_floor out;
  out.handoff_rtt_p50_us = measure_handoff(plan);
  std::vector<char> src(big_object_bytes, 'x');
  std::vector<char> dst(big_object_bytes, 'y');
  out.memcpy_100mb_us = median_of_reps(plan.reps, 1, [&](size_t) {
    auto t0 = bench_clock::now();
    std::memcpy(dst.data(), src.data(), big_object_bytes);
    auto us = seconds_since(t0) * 1e6;
    check(dst[big_object_bytes - 1] == 'x', "memcpy");
    return us;
  });
  out.make_shared_per_s = median_of_reps(plan.reps, plan.put_ops, [&](size_t n) {
    std::vector<std::shared_ptr<int>> keep;
    keep.reserve(n);
    auto t0 = bench_clock::now();
    for (size_t i = 0; i < n; ++i)
      keep.push_back(std::make_shared<int>(static_cast<int>(i)));
    return static_cast<double>(n) / seconds_since(t0);
  });
  auto shared = std::make_shared<const int>(42);
  out.shared_ptr_copy_per_s = median_of_reps(plan.reps, plan.get_ops, [&](size_t n) {
    std::atomic<long> sum{0};
    auto t0 = bench_clock::now();
    for (size_t i = 0; i < n; ++i) {
      std::shared_ptr<const int> copy = shared;
      sum.fetch_add(*copy, std::memory_order_relaxed);
    }
    return static_cast<double>(n) / seconds_since(t0);
  });
  return out;
}

// -- the runtime
// -------------------------------------------------------------------------

/// The actor the actor phases call.
struct echo : actor {
  int ping(int x) { return x; }
};

/// The runtime's figures, before floors are set beside them.
struct swarm_figures {
  double actor_rtt_p50_us = 0;
  double tasks_sync = 0;
  double tasks_async = 0;
  double actor_sync = 0;
  double actor_async = 0;
  double n_n_async = 0;
  double put = 0;
  double get = 0;
  double get_100mb_us = 0;
  double dag_ms = 0;
  size_t n_n_callers = 0;
  bool big_get_zero_copy = true;
};

swarm_figures measure_swarm(const bench_plan& plan, caf_echo_rig& rig, caf_floor& floor) {
  application app;
  auto add = app.function("add", [](int a, int b) { return a + b; });
  auto leaf = app.function("leaf", [](int i) { return i; });
  auto sum10 = app.function(
      "sum10", [](int a0, int a1, int a2, int a3, int a4, int a5, int a6, int a7, int a8,
                  int a9) { return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9; });
  auto echo_t = app.actor_type<echo>("echo");
  runtime rt{app};
  swarm_figures out;

  // Actor call round trip, each repetition right after one of bare CAF so that both see
  // the machine in the same state; the same loops give the sequential call rates.
  auto h = rt.spawn(echo_t);
  std::vector<double> caf_p50, caf_rates, rates;
  out.actor_rtt_p50_us = median_of_reps(plan.reps, plan.rtt_calls, [&](size_t n) {
    auto caf_t0 = bench_clock::now();
    auto raw = rig.round_trips(n, plan.cap);
    caf_rates.push_back(static_cast<double>(raw.size()) / seconds_since(caf_t0));
    caf_p50.push_back(median(std::move(raw)));
    std::vector<double> us;
    us.reserve(n);
    auto t0 = bench_clock::now();
    for (size_t i = 0; i < n && !past_cap(i, t0, plan.cap); ++i) {
      auto s = bench_clock::now();
      auto got = h.call(&echo::ping, static_cast<int>(i)).get().value();
      us.push_back(seconds_since(s) * 1e6);
      check(got == static_cast<int>(i), "actor call");
    }
    rates.push_back(static_cast<double>(us.size()) / seconds_since(t0));
    return median(std::move(us));
  });
  auto last_reps = [&](const std::vector<double>& xs) {
    return median(std::vector<double>(xs.end() - plan.reps, xs.end()));
  };
  out.actor_sync = last_reps(rates);
  floor.rtt_p50_us = last_reps(caf_p50);
  floor.sync_per_s = last_reps(caf_rates);
  floor.pipelined_per_s = median_of_reps(
      plan.reps, plan.batch, [&](size_t n) { return rig.pipelined(n, plan.cap); });

  out.actor_async = median_of_reps(plan.reps, plan.batch, [&](size_t n) {
    std::vector<object_ref<int>> refs;
    refs.reserve(n);
    auto t0 = bench_clock::now();
    for (size_t i = 0; i < n && !past_cap(i, t0, plan.cap); ++i)
      refs.push_back(h.call(&echo::ping, static_cast<int>(i)));
    for (size_t i = 0; i < refs.size(); ++i)
      check(refs[i].get().value() == static_cast<int>(i), "actor call batch");
    return static_cast<double>(refs.size()) / seconds_since(t0);
  });

  // N callers, each on its own thread with its own actor.
  out.n_n_callers = std::max<size_t>(1, std::thread::hardware_concurrency());
  std::vector<actor_handle<echo>> actors;
  for (size_t i = 0; i < out.n_n_callers; ++i)
    actors.push_back(rt.spawn(echo_t));
  out.n_n_async = median_of_reps(plan.reps, plan.n_n_calls_per_caller, [&](size_t n) {
    std::atomic<bool> go{false};
    std::atomic<size_t> total{0};
    std::vector<std::thread> callers;
    for (auto& a : actors)
      callers.emplace_back([&, a] {
        while (!go.load())
          std::this_thread::yield();
        std::vector<object_ref<int>> refs;
        refs.reserve(n);
        auto t0 = bench_clock::now();
        for (size_t i = 0; i < n && !past_cap(i, t0, plan.cap); ++i)
          refs.push_back(a.call(&echo::ping, static_cast<int>(i)));
        for (auto& r : refs)
          r.get().value();
        total += refs.size();
      });
    auto t0 = bench_clock::now();
    go = true;
    for (auto& t : callers)
      t.join();
    return static_cast<double>(total.load()) / seconds_since(t0);
  });

  out.tasks_sync = median_of_reps(plan.reps, plan.sync_ops, [&](size_t n) {
    auto t0 = bench_clock::now();
    size_t i = 0;
    for (; i < n && !past_cap(i, t0, plan.cap); ++i)
      check(rt.submit(add, static_cast<int>(i), 1).get().value() ==
                static_cast<int>(i) + 1,
            "task");
    return static_cast<double>(i) / seconds_since(t0);
  });

  out.tasks_async = median_of_reps(plan.reps, plan.batch, [&](size_t n) {
    std::vector<object_ref<int>> refs;
    refs.reserve(n);
    auto t0 = bench_clock::now();
    for (size_t i = 0; i < n && !past_cap(i, t0, plan.cap); ++i)
      refs.push_back(rt.submit(add, static_cast<int>(i), 1));
    for (size_t i = 0; i < refs.size(); ++i)
      check(refs[i].get().value() == static_cast<int>(i) + 1, "task batch");
    return static_cast<double>(refs.size()) / seconds_since(t0);
  });

  out.put = median_of_reps(plan.reps, plan.put_ops, [&](size_t n) {
    std::vector<object_ref<int>> refs;
    refs.reserve(n);
    auto t0 = bench_clock::now();
    for (size_t i = 0; i < n && !past_cap(i, t0, plan.cap); ++i)
      refs.push_back(rt.put(static_cast<int>(i)));
    auto rate = static_cast<double>(refs.size()) / seconds_since(t0);
    check(refs.back().get().value() == static_cast<int>(refs.size()) - 1, "put");
    return rate;
  });

  auto small = rt.put(42);
  out.get = median_of_reps(plan.reps, plan.get_ops, [&](size_t n) {
    long sum = 0;
    auto t0 = bench_clock::now();
    size_t i = 0;
    for (; i < n && !past_cap(i, t0, plan.cap); ++i)
      sum += small.get().value();
    auto rate = static_cast<double>(i) / seconds_since(t0);
    check(sum == 42 * static_cast<long>(i), "get");
    return rate;
  });

  // 1,000 leaves reduced by a tree of ten-argument sums (100, 10, then 1 task).
  out.dag_ms = median_of_reps(plan.reps, 1, [&](size_t) {
    auto t0 = bench_clock::now();
    std::vector<object_ref<int>> level;
    level.reserve(1000);
    for (int i = 0; i < 1000; ++i)
      level.push_back(rt.submit(leaf, i));
    while (level.size() > 1) {
      std::vector<object_ref<int>> next;
      for (size_t j = 0; j < level.size(); j += 10) {
        auto* l = &level[j];
        next.push_back(
            rt.submit(sum10, l[0], l[1], l[2], l[3], l[4], l[5], l[6], l[7], l[8], l[9]));
      }
      level = std::move(next);
    }
    auto total = level.front().get().value();
    auto ms = seconds_since(t0) * 1e3;
    check(total == 499'500, "fan-in");
    return ms;
  });

  // Last, so the 100 MB object does not sit in the store during the other phases.
  auto big = rt.put(std::vector<char>(big_object_bytes, 'x'));
  const void* first = big.get_shared().value().get();
  out.get_100mb_us = median_of_reps(plan.reps, plan.big_gets, [&](size_t n) {
    auto t0 = bench_clock::now();
    size_t i = 0;
    for (; i < n && !past_cap(i, t0, plan.cap); ++i) {
      auto p = big.get_shared().value();
      out.big_get_zero_copy = out.big_get_zero_copy && p.get() == first;
      check(p->size() == big_object_bytes, "get 100 MB");
    }
    return seconds_since(t0) * 1e6 / static_cast<double>(i);
  });
  return out;
}

// -- the report
// --------------------------------------------------------------------------

std::vector<figure> make_report(const swarm_figures& s, const caf_floor& c,
                                const memory_floor& m, size_t dag_tasks) {
  std::vector<figure> r;
  r.push_back({"local_actor_call_rtt_p50_us", s.actor_rtt_p50_us, "us",
               "caf_raw_local_rtt_p50_us", c.rtt_p50_us, goal::ratio_at_most, 1.25,
               "<= 1.25x raw CAF"});
  r.push_back({"single_client_tasks_sync", s.tasks_sync, "tasks/s", "caf_raw_sync_per_s",
               c.sync_per_s, goal::at_least, 100'000, ">= 100,000/s"});
  r.push_back({"single_client_tasks_async", s.tasks_async, "tasks/s",
               "caf_raw_pipelined_per_s", c.pipelined_per_s, goal::at_least, 300'000,
               ">= 300,000/s"});
  r.push_back({"1_1_actor_calls_sync", s.actor_sync, "calls/s", "caf_raw_sync_per_s",
               c.sync_per_s, goal::none, 0, ""});
  r.push_back({"1_1_actor_calls_async", s.actor_async, "calls/s",
               "caf_raw_pipelined_per_s", c.pipelined_per_s, goal::none, 0, ""});
  r.push_back({"n_n_actor_calls_async", s.n_n_async, "calls/s", "caf_raw_pipelined_per_s",
               c.pipelined_per_s, goal::none, 0, ""});
  r.push_back({"single_client_put_calls", s.put, "ops/s", "make_shared_small_per_s",
               m.make_shared_per_s, goal::at_least, 1'000'000, ">= 1,000,000/s"});
  r.push_back({"single_client_get_calls", s.get, "ops/s", "shared_ptr_copy_per_s",
               m.shared_ptr_copy_per_s, goal::at_least, 2'000'000, ">= 2,000,000/s"});
  r.push_back({"single_client_get_100mb_us", s.get_100mb_us, "us", "memcpy_100mb_us",
               m.memcpy_100mb_us, goal::below, 50, "< 50 us"});
  double dag_at_async_rate =
      s.tasks_async > 0 ? static_cast<double>(dag_tasks) / s.tasks_async * 1e3 : 0;
  r.push_back({"dag_1000_fanin_ms", s.dag_ms, "ms", "dag_1000_fanin_at_async_rate_ms",
               dag_at_async_rate, goal::at_most, 5, "<= 5 ms"});
  r.push_back({"caf_raw_local_rtt_p50_us", c.rtt_p50_us, "us", "", 0, goal::none, 0, ""});
  r.push_back({"thread_handoff_rtt_p50_us", m.handoff_rtt_p50_us, "us", "", 0, goal::none,
               0, ""});
  r.push_back({"caf_raw_sync_per_s", c.sync_per_s, "rt/s", "", 0, goal::none, 0, ""});
  r.push_back(
      {"caf_raw_pipelined_per_s", c.pipelined_per_s, "msg/s", "", 0, goal::none, 0, ""});
  r.push_back({"make_shared_small_per_s", m.make_shared_per_s, "ops/s", "", 0, goal::none,
               0, ""});
  r.push_back({"shared_ptr_copy_per_s", m.shared_ptr_copy_per_s, "ops/s", "", 0,
               goal::none, 0, ""});
  r.push_back({"memcpy_100mb_us", m.memcpy_100mb_us, "us", "", 0, goal::none, 0, ""});
  r.push_back({"dag_1000_fanin_at_async_rate_ms", dag_at_async_rate, "ms", "", 0,
               goal::none, 0, ""});
  return r;
}

void print_table(const std::vector<figure>& rows, const swarm_figures& s,
                 const bench_plan& p, double total_s) {
  print_rows(rows);
  std::printf(
      "\nmedian of %d repetitions after a warm-up; n_n callers: %zu; 100 MB get %s; "
      "total %.1f s\n",
      p.reps, s.n_n_callers, s.big_get_zero_copy ? "zero-copy" : "COPIED", total_s);
}

// -- command line
// ------------------------------------------------------------------------

void bench_usage(std::FILE* out) {
  std::fprintf(out, "usage: swarm bench [--nodes 1|2] [--quick] [--json FILE]\n");
}

/// Parses `args`; returns the exit code to stop with, or -1 to go on.
int parse(const std::vector<std::string>& args, bench_options& opts) {
  for (size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    auto value = [&](std::string& v) {
      if (i + 1 >= args.size() || args[i + 1].rfind("--", 0) == 0) {
        std::fprintf(stderr, "swarm bench: %s needs a value\n", a.c_str());
        return false;
      }
      v = args[++i];
      return true;
    };
    if (a == "--quick") {
      opts.quick = true;
    } else if (a == "--json") {
      if (!value(opts.json_path)) return 2;
    } else if (a == "--nodes") {
      std::string v;
      if (!value(v)) return 2;
      size_t used = 0;
      try {
        opts.nodes = std::stoi(v, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != v.size() || opts.nodes < 1) {
        std::fprintf(stderr,
                     "swarm bench: --nodes expects a positive integer, not '%s'\n",
                     v.c_str());
        return 2;
      }
    } else if (a == "--help" || a == "-h") {
      bench_usage(stdout);
      return 0;
    } else {
      std::fprintf(stderr, "swarm bench: unknown option '%s'\n", a.c_str());
      bench_usage(stderr);
      return 2;
    }
  }
  if (opts.nodes > 2) {
    std::fprintf(stderr, "swarm bench: --nodes %d: only 1 or 2 nodes are measured\n",
                 opts.nodes);
    return 2;
  }
  return -1;
}

} // namespace

int run_bench(const std::vector<std::string>& args) {
  bench_options opts;
  if (auto rc = parse(args, opts); rc >= 0) return rc;
  auto plan = plan_for(opts.quick);
  auto t0 = bench_clock::now();
  try {
    std::printf("swarm bench --nodes %d%s: measuring...\n\n", opts.nodes,
                opts.quick ? " --quick" : "");
    std::fflush(stdout);
    if (opts.nodes == 2) {
      auto rows = measure_remote(opts.quick);
      print_rows(rows);
      std::printf("\ntotal %.1f s\n", seconds_since(t0));
      if (!opts.json_path.empty() && !write_json(opts.json_path, rows)) {
        std::fprintf(stderr, "swarm bench: cannot write '%s'\n", opts.json_path.c_str());
        return 1;
      }
      return 0;
    }
    auto mem = measure_memory(plan);
    caf_echo_rig rig;
    caf_floor raw;
    auto sw = measure_swarm(plan, rig, raw);
    auto rows = make_report(sw, raw, mem, 1000 + 100 + 10 + 1);
    print_table(rows, sw, plan, seconds_since(t0));
    rows.push_back({"local_actor_call_rtt_ratio", ratio_of(rows.front()), "x", "", 0,
                    goal::none, 0, ""});
    if (!opts.json_path.empty() && !write_json(opts.json_path, rows)) {
      std::fprintf(stderr, "swarm bench: cannot write '%s'\n", opts.json_path.c_str());
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "swarm bench: %s\n", e.what());
    return 1;
  }
  return 0;
}

} // namespace swarm::tools
