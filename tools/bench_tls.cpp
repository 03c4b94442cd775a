#include "tools/bench_remote.hpp"

// Remote calls and a transfer between two node processes with TLS on every connection,
// beside the same workloads in the clear, in one run: clusters of each kind in turn.

#include <unistd.h>

#include <array>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "framework/swarm.hpp"
#include "tools/bench_cluster.hpp"
#include "tools/bench_stats.hpp"
#include "tools/bench_workloads.hpp"

namespace swarm::tools {

namespace {

using namespace std::chrono_literals;

constexpr size_t tls_transfer_bytes = size_t{100} << 20;

struct link_figures {
  std::vector<double> p50_us, async_per_s, transfer_gb_s;
};

// One cluster of two nodes with `[tls] mode` = `mode`, measured once.
void measure_once(const bench_plan& p, const std::string& mode, link_figures& out) {
  char dir_tmpl[] = "/tmp/swarm-bench-tls-XXXXXX";
  if (::mkdtemp(dir_tmpl) == nullptr)
    throw std::runtime_error("cannot create a temporary folder under /tmp");
  cluster_nodes c{dir_tmpl, 2, "", "[tls]\nmode = \"" + mode + "\"\n"};
  auto& rt = *c.rt;
  actor_options on_n2;
  on_n2.node = "n2";
  task_options task_on_n2;
  task_on_n2.node = "n2";
  auto echo = rt.spawn(on_n2, c.fns.echo);
  for (int i = 0; i < 200; ++i)
    echo.call(&bench_echo::ping, i).get(10s).value();

  std::vector<double> us;
  us.reserve(p.rtt_calls);
  for (size_t i = 0; i < p.rtt_calls; ++i) {
    auto start = bench_clock::now();
    check(echo.call(&bench_echo::ping, static_cast<int>(i)).get(10s).value() ==
              static_cast<int>(i),
          "remote actor call");
    us.push_back(seconds_since(start) * 1e6);
  }
  out.p50_us.push_back(median(us));

  std::vector<object_ref<int>> refs;
  refs.reserve(p.remote_pipelined);
  auto t0 = bench_clock::now();
  for (size_t i = 0; i < p.remote_pipelined; ++i)
    refs.push_back(echo.call(&bench_echo::ping, static_cast<int>(i)));
  for (size_t i = 0; i < refs.size(); ++i)
    check(refs[i].get(30s).value() == static_cast<int>(i), "pipelined remote call");
  out.async_per_s.push_back(static_cast<double>(refs.size()) / seconds_since(t0));

  // The first pull makes n2's copy in fresh memory; those after it in the memory the
  // freed copies left (as `remote_transfer_gigabytes` reads warm pulls).
  for (int r = 0; r < 3; ++r) {
    auto big = rt.put(std::vector<uint8_t>(tls_transfer_bytes, static_cast<uint8_t>(r)));
    t0 = bench_clock::now();
    auto n = rt.submit(task_on_n2, c.fns.byte_count, big).get(60s).value();
    double rate = static_cast<double>(tls_transfer_bytes) / seconds_since(t0) / 1e9;
    check(n == static_cast<int64_t>(tls_transfer_bytes), "100 MB transfer (wrong size)");
    if (r > 0) out.transfer_gb_s.push_back(rate);
    std::this_thread::sleep_for(150ms); // n2 drops its copy
  }
}

} // namespace

void measure_tls(bench_session& s) {
  if (!s.wants("tls_remote")) return;
  auto& p = s.plan();
  std::array<link_figures, 2> got; // in the clear, under TLS
  // Alternated, so both kinds see the machine in the same states.
  for (int r = 0; r < p.reps; ++r)
    for (int tls : {0, 1})
      measure_once(p, tls ? "on" : "off", got[tls]);
  auto& plain = got[0];
  auto& tls = got[1];
  double p50 = s.floor("plain_remote_actor_call_rtt_p50_us", "us",
                       [&] { return median(plain.p50_us); });
  double async = s.floor("plain_remote_1_1_actor_calls_async", "calls/s",
                         [&] { return median(plain.async_per_s); });
  double transfer = s.floor("plain_remote_transfer_gigabytes", "GB/s",
                            [&] { return median(plain.transfer_gb_s); });
  s.add({"tls_remote_actor_call_rtt_p50_us", median(tls.p50_us), "us",
         "plain_remote_actor_call_rtt_p50_us", p50, goal::ratio_at_most, 1.3,
         "<= 1.3x in the clear"});
  s.add(versus("tls_remote_1_1_actor_calls_async", median(tls.async_per_s), "calls/s",
               "plain_remote_1_1_actor_calls_async", async));
  s.add({"tls_remote_transfer_gigabytes", median(tls.transfer_gb_s), "GB/s",
         "plain_remote_transfer_gigabytes", transfer, goal::ratio_at_least, 0.7,
         ">= 0.7x in the clear"});
}

} // namespace swarm::tools
