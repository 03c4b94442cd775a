#include "tools/bench_remote.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>

#include "framework/swarm.hpp"
#include "tools/bench_floors.hpp"

namespace swarm::tools {

namespace {

using bench_clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr size_t transfer_bytes = size_t{100} << 20;
constexpr size_t floor_message_bytes = 128;

/// The remote end of the actor-call figures.
class bench_echo : public actor {
public:
  int ping(int x) { return x; }
};

int64_t byte_count(const std::vector<uint8_t>& b) {
  return static_cast<int64_t>(b.size());
}

int noop(int x) {
  return x;
}

double seconds_since(bench_clock::time_point t0) {
  return std::chrono::duration<double>(bench_clock::now() - t0).count();
}

double median(std::vector<double> xs) {
  if (xs.empty()) return 0;
  std::sort(xs.begin(), xs.end());
  return xs[xs.size() / 2];
}

double percentile(std::vector<double> xs, double p) {
  if (xs.empty()) return 0;
  std::sort(xs.begin(), xs.end());
  return xs[std::min(xs.size() - 1,
                     static_cast<size_t>(p * static_cast<double>(xs.size())))];
}

struct plan {
  int reps;
  size_t rtt_calls;
  size_t pipelined;
  size_t tasks;
  int transfers;
};

} // namespace

void register_remote_bench(application& app) {
  app.function("bench.noop", noop);
  app.function("bench.byte_count", byte_count);
  app.actor_type<bench_echo>("bench.echo").method("ping", &bench_echo::ping);
}

std::vector<figure> measure_remote(bool quick) {
  plan p = quick ? plan{3, 2'000, 20'000, 10'000, 2} : plan{5, 10'000, 50'000, 50'000, 5};
  application app;
  register_remote_bench(app);
  auto noop_fn = app.find_function<int(int)>("bench.noop").value();
  auto count_fn =
      app.find_function<int64_t(const std::vector<uint8_t>&)>("bench.byte_count").value();
  auto echo_t = app.find_actor_type<bench_echo>("bench.echo").value();

  // A two-node cluster on 127.0.0.1: this process is the head, a child the other node.
  char dir_tmpl[] = "/tmp/swarm-bench-XXXXXX";
  std::string dir = ::mkdtemp(dir_tmpl);
  std::string file = dir + "/cluster.toml";
  std::random_device rd;
  std::string secret = "bench-" + std::to_string(rd()) + "-" + std::to_string(rd());
  {
    auto ports = free_local_ports(2).value();
    std::ofstream out{file};
    out << "[cluster]\nname = \"bench\"\nsecret = \"" << secret
        << "\"\n[[node]]\nname = \"head\"\naddress = \"127.0.0.1\"\nport = "
        << ports[0]
        << "\nrole = \"head\"\n[[node]]\nname = \"n2\"\naddress = \"127.0.0.1\"\nport = "
        << ports[1] << "\n";
  }
  auto cfg = load_cluster_config(file).value();
  runtime rt{app, cfg, "head"};
  auto child = start_self({"start", "--config", file, "--node", "n2"});
  bool joined = false;
  for (int i = 0; i < 200 && !joined; ++i) {
    auto s = cluster_status(cfg, 1s);
    joined = s && s->alive() == 2;
    if (!joined) std::this_thread::sleep_for(50ms);
  }
  if (!joined) throw std::runtime_error("the second node did not join within 10 s");
  std::remove(file.c_str());
  ::rmdir(dir.c_str());

  actor_options on_n2;
  on_n2.node = "n2";
  task_options task_on_n2;
  task_on_n2.node = "n2";
  auto echo = rt.spawn(on_n2, echo_t);
  for (int i = 0; i < 200; ++i)
    echo.call(&bench_echo::ping, i).get(10s).value();

  std::vector<double> p50s, p99s, sync_rates, async_rates, task_rates, transfer_rates;
  for (int r = 0; r < p.reps; ++r) {
    std::vector<double> us;
    us.reserve(p.rtt_calls);
    auto t0 = bench_clock::now();
    for (size_t i = 0; i < p.rtt_calls; ++i) {
      auto s = bench_clock::now();
      if (echo.call(&bench_echo::ping, static_cast<int>(i)).get(10s).value() !=
          static_cast<int>(i))
        throw std::runtime_error("wrong reply from the remote actor");
      us.push_back(
          std::chrono::duration<double, std::micro>(bench_clock::now() - s).count());
    }
    sync_rates.push_back(static_cast<double>(p.rtt_calls) / seconds_since(t0));
    p50s.push_back(median(us));
    p99s.push_back(percentile(us, 0.99));

    std::vector<object_ref<int>> refs;
    refs.reserve(p.pipelined);
    t0 = bench_clock::now();
    for (size_t i = 0; i < p.pipelined; ++i)
      refs.push_back(echo.call(&bench_echo::ping, static_cast<int>(i)));
    for (auto& f : refs)
      f.get(30s).value();
    async_rates.push_back(static_cast<double>(p.pipelined) / seconds_since(t0));

    refs.clear();
    t0 = bench_clock::now();
    for (size_t i = 0; i < p.tasks; ++i)
      refs.push_back(rt.submit(task_on_n2, noop_fn, static_cast<int>(i)));
    for (auto& f : refs)
      f.get(30s).value();
    task_rates.push_back(static_cast<double>(p.tasks) / seconds_since(t0));
  }
  for (int r = 0; r < p.transfers; ++r) {
    auto big = rt.put(std::vector<uint8_t>(transfer_bytes, static_cast<uint8_t>(r)));
    auto t0 = bench_clock::now();
    auto n = rt.submit(task_on_n2, count_fn, big).get(60s).value();
    transfer_rates.push_back(static_cast<double>(transfer_bytes) / seconds_since(t0) /
                             1e9);
    if (n != static_cast<int64_t>(transfer_bytes))
      throw std::runtime_error("the transferred object arrived with the wrong size");
  }

  // Floors in the same run, each between two fresh processes.
  std::vector<double> tcp_p50s, caf_p50s, stream_rates;
  for (int r = 0; r < p.reps; ++r) {
    tcp_p50s.push_back(
        median(tcp_floor_round_trips(floor_message_bytes, p.rtt_calls, 5s)));
    caf_p50s.push_back(
        median(caf_remote_round_trips(std::min<size_t>(p.rtt_calls, 2'000), 5s)));
  }
  for (int r = 0; r < p.transfers; ++r)
    stream_rates.push_back(tcp_stream_gigabytes(transfer_bytes));

  double tcp = median(tcp_p50s);
  double stream = median(stream_rates);
  std::vector<figure> rows;
  rows.push_back({"remote_actor_call_rtt_p50_us", median(p50s), "us",
                  "tcp_floor_rtt_p50_us", tcp, goal::ratio_at_most, 1.5, "<= 1.5x TCP"});
  rows.push_back({"remote_actor_call_rtt_p99_us", median(p99s), "us",
                  "tcp_floor_rtt_p50_us", tcp, goal::none, 0, ""});
  rows.push_back({"remote_1_1_actor_calls_sync", median(sync_rates), "calls/s",
                  "tcp_floor_rtt_p50_us", 1e6 / tcp, goal::none, 0, ""});
  rows.push_back({"remote_1_1_actor_calls_async", median(async_rates), "calls/s",
                  "tcp_floor_rtt_p50_us", 1e6 / tcp, goal::at_least, 80'000,
                  ">= 80,000/s"});
  rows.push_back({"remote_single_client_tasks_async", median(task_rates), "tasks/s",
                  "tcp_floor_rtt_p50_us", 1e6 / tcp, goal::none, 0, ""});
  rows.push_back({"remote_transfer_gigabytes", median(transfer_rates), "GB/s",
                  "tcp_floor_gigabytes", stream, goal::ratio_at_least, 0.9,
                  ">= 0.9x TCP"});
  rows.push_back({"tcp_floor_rtt_p50_us", tcp, "us", "", 0, goal::none, 0, ""});
  rows.push_back(
      {"caf_raw_remote_rtt_p50_us", median(caf_p50s), "us", "", 0, goal::none, 0, ""});
  rows.push_back({"tcp_floor_gigabytes", stream, "GB/s", "", 0, goal::none, 0, ""});
  return rows;
}

} // namespace swarm::tools
