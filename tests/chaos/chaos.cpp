// The chaos check: a 4-node cluster on 127.0.0.1 runs a workload of dependent tasks and
// stateful actors twice, once undisturbed and once while worker nodes are killed (and
// started again) or frozen (and thawed), and the two results are compared with what the
// same functions compute in this process.
//
//   swarm_chaos run [--quick] [--seed N]    the check; prints the `chaos:` line
//   swarm_chaos node --config F --node N    a worker node (started by `run`)

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "framework/local_cluster.hpp"
#include "framework/swarm.hpp"
#include "tests/cluster/child_node.hpp"
#include "tests/cluster/node_process.hpp"

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

namespace {

// -- the workload's functions: deterministic, so this process can check every value ----

uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return x;
}

uint64_t step(uint64_t prev, int lane, int round) {
  return mix(prev + static_cast<uint64_t>(lane) * 1000003 + static_cast<uint64_t>(round));
}

// Large enough (96 KiB) to stay on the node that made it.
std::vector<uint8_t> expand(uint64_t seed) {
  std::vector<uint8_t> out(96 * 1024);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<uint8_t>(mix(seed + i / 64) >> (i % 8));
  return out;
}

uint64_t fold(const std::vector<uint8_t>& big, uint64_t prev) {
  uint64_t h = prev;
  for (size_t i = 0; i < big.size(); i += 61)
    h = h * 31 + big[i];
  return mix(h);
}

/// Records values by key (so a call sent twice changes nothing) and saves them all.
class ledger : public swarm::actor {
public:
  uint64_t record(uint64_t key, uint64_t value) {
    entries_[key] = value;
    return value;
  }
  std::vector<uint64_t> total() const {
    uint64_t sum = 0;
    for (auto& [k, v] : entries_)
      sum += v * (k + 1);
    return {entries_.size(), sum};
  }
  std::vector<uint8_t> on_checkpoint() override { return swarm::encode(entries_); }
  void on_restore(const std::vector<uint8_t>& state) override {
    std::string why;
    if (!swarm::decode(state.data(), state.size(), entries_, why))
      throw std::runtime_error("bad checkpoint: " + why);
  }

private:
  std::map<uint64_t, uint64_t> entries_;
};

void register_workload(swarm::application& app) {
  app.function("step", step);
  app.function("expand", expand);
  app.function("fold", fold);
  app.actor_type<ledger>("ledger")
      .constructor<>()
      .method("record", &ledger::record)
      .method("total", &ledger::total);
}

struct workload_size {
  int lanes;
  int rounds;
  int actors;
};

/// When each task and call of the workload finished: the longest gap between two is the
/// longest time the workload made no progress.
class progress_log {
public:
  /// `call`: an actor call, else a task.
  template <class T> void track(const swarm::object_ref<T>& r, bool call = false) {
    {
      std::lock_guard<std::mutex> g{times_->mtx};
      ++times_->pending[call];
    }
    r.slot()->when_done([t = times_, call] {
      std::lock_guard<std::mutex> g{t->mtx};
      t->at.push_back(clock_type::now());
      t->latest = std::max(t->latest, t->at.back());
      --t->pending[call];
    });
  }

  /// When the last task or call finished (`from` if none did since), and how many tasks
  /// and calls are not done.
  std::tuple<clock_type::time_point, long, long> state(clock_type::time_point from) {
    std::lock_guard<std::mutex> g{times_->mtx};
    return {std::max(from, times_->latest), times_->pending[0], times_->pending[1]};
  }

  /// The longest gap between two completions after `from`, in ms.
  double longest_stall_ms(clock_type::time_point from) {
    std::vector<clock_type::time_point> at;
    {
      std::lock_guard<std::mutex> g{times_->mtx};
      at = times_->at;
    }
    std::sort(at.begin(), at.end());
    double worst = 0;
    auto last = from;
    for (auto& x : at) {
      if (x < from) continue;
      worst =
          std::max(worst, std::chrono::duration<double, std::milli>(x - last).count());
      last = x;
    }
    return worst;
  }

private:
  // Shared with the callbacks: a slot may finish after the log is gone.
  struct times {
    std::mutex mtx;
    std::vector<clock_type::time_point> at;
    clock_type::time_point latest; // the last completion
    long pending[2] = {0, 0};      // tasks, calls
  };
  std::shared_ptr<times> times_ = std::make_shared<times>();
};

struct outcome {
  std::vector<uint64_t> values; // each lane's last value, then each ledger's two totals
  size_t lost = 0;              // futures that ended in an error
  size_t tasks = 0;
  double seconds = 0;
};

// Every 5th round a lane's value grows into a large object on a worker and is folded
// back; the ledgers record each lane's value on those rounds.
bool big_round(int r) {
  return r % 5 == 4;
}

outcome run_workload(swarm::runtime& rt, const swarm::application& app, workload_size n,
                     progress_log& progress) {
  auto step_fn = app.find_function<uint64_t(uint64_t, int, int)>("step").value();
  auto expand_fn = app.find_function<std::vector<uint8_t>(uint64_t)>("expand").value();
  auto fold_fn =
      app.find_function<uint64_t(const std::vector<uint8_t>&, uint64_t)>("fold").value();
  auto ledger_t = app.find_actor_type<ledger>("ledger").value();
  swarm::task_options on_workers;
  on_workers.resources.set("w", 1); // only the workers have it: every task may be lost
  on_workers.max_retries = 50;
  swarm::actor_options durable;
  durable.resources.set("w", 0.01);
  durable.max_restarts = 50;
  durable.max_task_retries = 50;
  durable.checkpoint_every = 1;
  outcome out;
  auto start = clock_type::now();
  std::vector<swarm::actor_handle<ledger>> ledgers;
  for (int a = 0; a < n.actors; ++a)
    ledgers.push_back(rt.spawn(durable, ledger_t));
  std::vector<swarm::object_ref<uint64_t>> x;
  for (int l = 0; l < n.lanes; ++l)
    x.push_back(rt.put(static_cast<uint64_t>(l)));
  std::vector<swarm::object_ref<uint64_t>> recorded;
  for (int r = 0; r < n.rounds; ++r) {
    for (int l = 0; l < n.lanes; ++l) {
      x[l] = rt.submit(on_workers, step_fn, x[l], l, r);
      progress.track(x[l]);
      ++out.tasks;
      if (!big_round(r)) continue;
      auto big = rt.submit(on_workers, expand_fn, x[l]);
      progress.track(big);
      x[l] = rt.submit(on_workers, fold_fn, big, x[l]);
      progress.track(x[l]);
      out.tasks += 2;
      auto key = static_cast<uint64_t>(r) * static_cast<uint64_t>(n.lanes) +
                 static_cast<uint64_t>(l);
      recorded.push_back(
          ledgers[static_cast<size_t>(l % n.actors)].call(&ledger::record, key, x[l]));
      progress.track(recorded.back(), true);
    }
  }
  for (auto& v : x) {
    auto got = v.get(120s);
    out.lost += got ? 0 : 1;
    out.values.push_back(got ? *got : 0);
    if (!got)
      std::fprintf(stderr, "chaos: lost a lane: %s\n", got.err().to_string().c_str());
  }
  for (auto& r : recorded)
    out.lost += r.get(120s) ? 0 : 1;
  for (auto& a : ledgers) {
    auto t = a.call(&ledger::total).get(120s);
    out.lost += t ? 0 : 1;
    if (!t)
      std::fprintf(stderr, "chaos: lost a ledger: %s\n", t.err().to_string().c_str());
    auto v = t ? *t : std::vector<uint64_t>{0, 0};
    out.values.insert(out.values.end(), v.begin(), v.end());
  }
  out.seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  return out;
}

// The same workload computed here, without the framework.
std::vector<uint64_t> expected(workload_size n) {
  std::vector<uint64_t> x(static_cast<size_t>(n.lanes));
  std::vector<std::map<uint64_t, uint64_t>> books(static_cast<size_t>(n.actors));
  for (int l = 0; l < n.lanes; ++l)
    x[static_cast<size_t>(l)] = static_cast<uint64_t>(l);
  for (int r = 0; r < n.rounds; ++r)
    for (int l = 0; l < n.lanes; ++l) {
      auto& v = x[static_cast<size_t>(l)];
      v = step(v, l, r);
      if (!big_round(r)) continue;
      v = fold(expand(v), v);
      books[static_cast<size_t>(l % n.actors)]
           [static_cast<uint64_t>(r) * static_cast<uint64_t>(n.lanes) +
            static_cast<uint64_t>(l)] = v;
    }
  for (auto& b : books) {
    uint64_t sum = 0;
    for (auto& [k, v] : b)
      sum += v * (k + 1);
    x.push_back(b.size());
    x.push_back(sum);
  }
  return x;
}

// How many of `got` differ from `want`; each is reported.
size_t differences(const std::vector<uint64_t>& got, const std::vector<uint64_t>& want,
                   int lanes) {
  size_t n = got.size() == want.size() ? 0 : std::max(got.size(), want.size());
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    if (got[i] == want[i]) continue;
    ++n;
    auto l = static_cast<size_t>(lanes);
    std::fprintf(stderr, "chaos: wrong %s %zu: got %llu, want %llu\n",
                 i < l ? "lane" : ((i - l) % 2 == 0 ? "ledger count" : "ledger sum"),
                 i < l ? i : (i - l) / 2, static_cast<unsigned long long>(got[i]),
                 static_cast<unsigned long long>(want[i]));
  }
  return n;
}

// -- the cluster ------------------------------------------------------------------------

std::string cluster_file(const std::vector<uint16_t>& ports, const std::string& secret) {
  std::string s = "[cluster]\nname = \"chaos\"\nsecret = \"" + secret +
                  "\"\nheartbeat_ms = 100\nnode_timeout_ms = 1000\ngcs_replication = 3\n"
                  "[limits]\ninline_threshold = \"64KiB\"\n";
  for (size_t i = 0; i < ports.size(); ++i) {
    s += "[[node]]\nname = \"" +
         (i == 0 ? std::string{"head"} : "worker-" + std::to_string(i)) +
         "\"\naddress = \"127.0.0.1\"\nport = " + std::to_string(ports[i]) +
         (i == 0 ? "\nrole = \"head\"\ncpus = 1\n"
                 : "\ncpus = 2\nresources = { w = 2 }\n");
  }
  return s;
}

/// Measures the control store as a client sees it: a write to its key-value table every
/// 20 ms, each answered once every member of the shard's chain has it.
class gcs_probe {
public:
  explicit gcs_probe(swarm::runtime& rt)
      : rt_(rt), thread_([this] {
          for (uint64_t i = 0; !stop_; ++i) {
            auto t0 = clock_type::now();
            auto ok = rt_.kv_put("probe-" + std::to_string(i), value_of(i));
            auto ms =
                std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
            {
              std::lock_guard<std::mutex> g{mtx_};
              samples_.push_back({t0, ms, i, ok.has_value()});
            }
            if (!ok)
              std::fprintf(stderr, "chaos: probe write %llu failed: %s\n",
                           static_cast<unsigned long long>(i),
                           ok.err().to_string().c_str());
            std::this_thread::sleep_for(20ms);
          }
        }) {}

  ~gcs_probe() { stop(); }

  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

  /// The longest write that started within `window` after one of `faults`, beyond the
  /// median write, in ms.
  double stall_ms(const std::vector<clock_type::time_point>& faults,
                  std::chrono::milliseconds window) {
    std::lock_guard<std::mutex> g{mtx_};
    if (samples_.empty()) return 0;
    std::vector<double> all;
    for (auto& x : samples_)
      all.push_back(x.ms);
    std::sort(all.begin(), all.end());
    double worst = all[all.size() / 2];
    for (auto& x : samples_)
      for (auto& f : faults)
        if (x.t0 + std::chrono::duration<double, std::milli>(x.ms) >= f &&
            x.t0 <= f + window)
          worst = std::max(worst, x.ms);
    return worst - all[all.size() / 2];
  }

  /// Writes that were answered but cannot be read back, and writes that failed.
  size_t lost() {
    std::lock_guard<std::mutex> g{mtx_};
    size_t n = 0;
    for (auto& x : samples_) {
      if (!x.ok) {
        ++n;
        continue;
      }
      auto got = rt_.kv_get("probe-" + std::to_string(x.key));
      if (!got || !*got || **got != value_of(x.key)) {
        std::fprintf(stderr, "chaos: probe write %llu is lost\n",
                     static_cast<unsigned long long>(x.key));
        ++n;
      }
    }
    return n;
  }

private:
  struct sample {
    clock_type::time_point t0;
    double ms;
    uint64_t key;
    bool ok;
  };

  static std::vector<uint8_t> value_of(uint64_t i) {
    std::vector<uint8_t> v(8);
    for (size_t b = 0; b < 8; ++b)
      v[b] = static_cast<uint8_t>(i >> (8 * b));
    return v;
  }

  swarm::runtime& rt_;
  std::atomic<bool> stop_{false};
  std::mutex mtx_;
  std::vector<sample> samples_;
  std::thread thread_;
};

int run(bool quick, unsigned seed, workload_size size) {
  char tmpl[] = "/tmp/swarm-chaos-XXXXXX";
  std::string dir = ::mkdtemp(tmpl);
  auto ports = swarm::free_local_ports(4);
  if (!ports) {
    std::fprintf(stderr, "chaos: %s\n", ports.err().message.c_str());
    return 2;
  }
  std::string config = dir + "/cluster.toml";
  std::ofstream{config} << cluster_file(*ports,
                                        "the-chaos-check-secret-" + std::to_string(seed));
  auto cfg = swarm::load_cluster_config(config);
  if (!cfg) {
    std::fprintf(stderr, "chaos: %s\n", cfg.err().message.c_str());
    return 2;
  }
  swarm::application app;
  register_workload(app);
  swarm::runtime rt{app, *cfg, "head"};
  std::string self = "/proc/self/exe";
  char exe[4096] = {};
  auto len = ::readlink(self.c_str(), exe, sizeof(exe) - 1);
  std::string binary{exe, len > 0 ? static_cast<size_t>(len) : 0};
  std::vector<std::unique_ptr<swarm::cluster_test::node_process>> workers(3);
  std::mutex workers_mtx; // the chaos thread replaces a worker as the watchdog reads
  auto start_worker = [&](size_t i) {
    auto name = "worker-" + std::to_string(i + 1);
    auto w = std::make_unique<swarm::cluster_test::node_process>(
        binary, std::vector<std::string>{"node", "--config", config, "--node", name},
        dir + "/" + name + ".log");
    std::lock_guard<std::mutex> g{workers_mtx};
    workers[i] = std::move(w);
  };
  auto alive = [&] {
    auto s = swarm::cluster_status(*cfg, 2s);
    return s ? s->alive() : size_t{0};
  };
  auto wait_alive = [&](size_t n) {
    for (int i = 0; i < 300 && alive() < n; ++i)
      std::this_thread::sleep_for(50ms);
    return alive() >= n;
  };
  for (size_t i = 0; i < workers.size(); ++i)
    start_worker(i);
  if (!wait_alive(4)) {
    std::fprintf(stderr, "chaos: the 4 nodes did not all join (logs in %s)\n",
                 dir.c_str());
    return 2;
  }
  auto want = expected(size);
  // The probe runs through the fault-free run too: its longest write there is the floor
  // the stalls after faults compare with (the machine is busy with the workload).
  gcs_probe probe{rt};
  progress_log progress;
  auto calm_start = clock_type::now();
  auto calm = run_workload(rt, app, size, progress);
  auto calm_progress_stall = progress.longest_stall_ms(calm_start);
  auto calm_stall =
      probe.stall_ms({calm_start}, std::chrono::duration_cast<std::chrono::milliseconds>(
                                       clock_type::now() - calm_start));
  std::fprintf(stderr, "chaos: fault-free run: %zu tasks in %.2f s\n", calm.tasks,
               calm.seconds);

  // The chaos runs: a fault every `gap`, a bounded number of them, while the workload
  // runs again and again until the last fault is over.
  std::atomic<bool> done{false}, finished{false};
  std::atomic<int> kills{0}, freezes{0};
  std::mutex faults_mtx;
  std::vector<clock_type::time_point> kill_times, freeze_times;
  auto gap = quick ? 1000ms : 2000ms;
  int max_faults = quick ? 4 : 10;
  std::mt19937 rng{seed};
  std::thread chaos{[&] {
    std::this_thread::sleep_for(gap / 2);
    for (int f = 0; f < max_faults; ++f) {
      auto i = static_cast<size_t>(rng() % workers.size());
      if (rng() % 2 == 0) {
        {
          std::lock_guard<std::mutex> g{faults_mtx};
          kill_times.push_back(clock_type::now());
        }
        workers[i]->kill_now();
        ++kills;
        std::this_thread::sleep_for(300ms);
        start_worker(i); // a fresh process under the same name
      } else {
        {
          std::lock_guard<std::mutex> g{faults_mtx};
          freeze_times.push_back(clock_type::now());
        }
        workers[i]->freeze();
        ++freezes;
        std::this_thread::sleep_for(1500ms); // past node_timeout: found dead
        workers[i]->thaw();
      }
      std::this_thread::sleep_for(gap);
    }
    done = true;
    // Workers started here die with this thread (PR_SET_PDEATHSIG): it lasts the run.
    while (!finished)
      std::this_thread::sleep_for(20ms);
  }};
  size_t lost = calm.lost, wrong = differences(calm.values, want, size.lanes), runs = 0,
         tasks = 0;
  double seconds = 0, stall = 0, freeze_stall = 0;
  auto stormy_start = clock_type::now();
  // A run that makes no progress for long says what it waits for, and what the nodes
  // were doing, before the check's time limit ends it.
  std::thread watchdog{[&] {
    bool told = false;
    while (!finished) {
      std::this_thread::sleep_for(500ms);
      auto [last, tasks_left, calls_left] = progress.state(stormy_start);
      if (told || clock_type::now() - last < 15s) continue;
      told = true;
      std::fprintf(stderr,
                   "chaos: nothing finished for 15 s: %ld task(s) and %ld ledger "
                   "call(s) not done\n",
                   tasks_left, calls_left);
      if (auto st = swarm::cluster_status(*cfg, 2s))
        for (auto& n : st->nodes)
          std::fprintf(stderr, "chaos:   node %s: %s, %u queued, %u running\n",
                       n.name.c_str(), n.alive ? "alive" : "dead", n.queued, n.running);
      std::lock_guard<std::mutex> g{workers_mtx};
      for (size_t i = 0; i < workers.size(); ++i) {
        auto log = workers[i]->log();
        auto from = log.size() > 3000 ? log.size() - 3000 : 0;
        std::fprintf(stderr, "chaos:   the end of worker-%zu's log:\n%s\n", i + 1,
                     log.substr(from).c_str());
      }
    }
  }};
  {
    do {
      auto stormy = run_workload(rt, app, size, progress);
      lost += stormy.lost;
      wrong += differences(stormy.values, want, size.lanes);
      seconds += stormy.seconds;
      tasks += stormy.tasks;
      ++runs;
    } while (!done);
    finished = true;
    chaos.join();
    watchdog.join();
    probe.stop();
    // A killed member is found at once (its connection closes); a frozen one only after
    // node_timeout, which bounds what a write waits then.
    stall = probe.stall_ms(kill_times, 500ms);
    freeze_stall = probe.stall_ms(freeze_times, 2000ms);
    lost += probe.lost();
  }
  std::fprintf(stderr,
               "chaos: control-store writes: longest beyond the median %.1f ms after a "
               "kill, %.1f ms after a freeze (node_timeout 1000 ms), %.1f ms in the "
               "fault-free run\n",
               stall, freeze_stall, calm_stall);
  std::fprintf(
      stderr,
      "chaos: %d kills and %d freezes of worker nodes during %zu runs, %zu tasks "
      "in %.2f s\n",
      kills.load(), freezes.load(), runs, tasks, seconds);
  auto progress_stall = progress.longest_stall_ms(stormy_start);
  std::fprintf(stderr,
               "chaos: longest time no task or call finished: %.0f ms under faults, %.0f "
               "ms in the fault-free run\n",
               progress_stall, calm_progress_stall);
  std::printf("chaos: kills=%d lost=%zu wrong=%zu time_ratio=%.2f gcs_stall_ms=%.1f "
              "progress_stall_ms=%.0f\n",
              kills.load() + freezes.load(), lost, wrong,
              seconds / static_cast<double>(runs) / calm.seconds, stall, progress_stall);
  std::fflush(stdout);
  return lost == 0 && wrong == 0 ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "node")
    return swarm::cluster_test::serve_child_node({args.begin() + 1, args.end()}, "swarm_chaos",
                                                 register_workload);
  if (args.empty() || args[0] != "run") {
    std::fprintf(stderr, "usage: swarm_chaos run [--quick] [--seed N] [--rounds N]\n"
                         "       swarm_chaos node --config FILE --node NAME\n");
    return 2;
  }
  bool quick = false;
  unsigned seed = static_cast<unsigned>(::getpid());
  int rounds = 0;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--quick") {
      quick = true;
    } else if (args[i] == "--rounds" && i + 1 < args.size()) {
      rounds = std::stoi(args[++i]);
    } else if (args[i] == "--seed" && i + 1 < args.size()) {
      seed = static_cast<unsigned>(std::stoul(args[++i]));
    } else {
      std::fprintf(stderr, "swarm_chaos: unknown argument '%s'\n", args[i].c_str());
      return 2;
    }
  }
  workload_size size = quick ? workload_size{40, 200, 3} : workload_size{64, 400, 4};
  if (rounds > 0) size.rounds = rounds;
  std::fprintf(stderr, "chaos: seed %u%s\n", seed, quick ? " (quick)" : "");
  return run(quick, seed, size);
}
