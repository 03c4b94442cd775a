// `swarm bench`: every figure beside a floor measured in the same run.

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "tools/bench_compare.hpp"
#include "tools/bench_local.hpp"
#include "tools/bench_plot.hpp"
#include "tools/bench_remote.hpp"
#include "tools/bench_session.hpp"
#include "tools/bench_sim.hpp"
#include "tools/bench_stats.hpp"
#include "tools/command.hpp"

namespace swarm::tools {

namespace {

// Checks what parsing cannot; the exit code to stop with, or -1 to go on.
int check(const bench_options& opts, int& nodes) {
  const auto& v = opts.nodes;
  if (v.empty() || v.size() > 2 ||
      v.find_first_not_of("0123456789") != std::string::npos || std::stoi(v) < 1 ||
      std::stoi(v) > 64) {
    std::fprintf(stderr,
                 "swarm bench: --nodes expects a node count from 1 to 64 (this process "
                 "and N-1 node processes on 127.0.0.1), not '%s'\n",
                 v.c_str());
    return 2;
  }
  nodes = std::stoi(v);
  if (opts.sim != 0 && (opts.sim < 2 || opts.sim > 4000)) {
    std::fprintf(stderr,
                 "swarm bench: --sim expects a node count from 2 to 4000 (simulated in "
                 "this process), not %d\n",
                 opts.sim);
    return 2;
  }
  if (!opts.compare.empty() && opts.measuring_option) {
    std::fprintf(stderr, "swarm bench: --compare reads two reports and measures nothing: "
                         "give it alone\n");
    return 2;
  }
  return -1;
}

void print_workloads(std::FILE* out, const bench_session& s) {
  for (auto& w : s.workloads())
    std::fprintf(out, "  %s\n", w.c_str());
}

/// Measures, prints and writes what `opts` asks for; the exit code.
int measure(const bench_options& opts, int nodes) {
  auto t0 = bench_clock::now();
  bench_session s{opts.quick, opts.filter};
  auto what =
      opts.sim ? "--sim " + std::to_string(opts.sim) : "--nodes " + std::to_string(nodes);
  std::printf("swarm bench %s%s%s%s: measuring...\n\n", what.c_str(),
              opts.quick ? " --quick" : "", opts.filter.empty() ? "" : " --filter ",
              opts.filter.c_str());
  std::fflush(stdout);
  if (opts.sim) {
    measure_sim(s, opts.sim, opts.quick);
  } else {
    measure_local(s);
    if (nodes >= 2) {
      measure_remote(s, nodes);
      measure_tls(s);
      measure_link(s);
    }
  }
  for (auto& why : s.skipped())
    std::printf("skipped %s\n", why.c_str());
  if (s.rows().empty() && s.curves().empty() && !s.skipped().empty()) return 0;
  if (s.rows().empty() && s.curves().empty()) {
    std::fprintf(stderr,
                 "swarm bench: --filter '%s' matches no workload; the workloads:\n",
                 opts.filter.c_str());
    print_workloads(stderr, s);
    return 2;
  }
  print_rows(s.rows());
  print_curves(s.curves());
  if (opts.sim)
    std::printf("\none simulated cluster per size; total %.1f s\n", seconds_since(t0));
  else
    std::printf("\nmedian of %d repetitions after a warm-up; %zu callers for n:n, 1:n "
                "and multi-client; total %.1f s\n",
                s.plan().reps, bench_parallelism(), seconds_since(t0));

  auto rows = s.rows();
  for (auto& f : s.rows())
    if (f.key == "local_actor_call_rtt_p50_us")
      rows.push_back(floor_row("local_actor_call_rtt_ratio", ratio_of(f), "x"));
  if (!opts.json_path.empty() && !write_json(opts.json_path, rows, s.curves())) {
    std::fprintf(stderr, "swarm bench: cannot write '%s'\n", opts.json_path.c_str());
    return 1;
  }
  if (!opts.plot_dir.empty())
    for (auto& path : write_plots(opts.plot_dir, s.rows(), s.curves()))
      std::printf("wrote %s\n", path.c_str());
  return 0;
}

} // namespace

int run_bench(const bench_options& opts) {
  int nodes = 2;
  if (auto rc = check(opts, nodes); rc >= 0) return rc;
  if (!opts.compare.empty()) return run_compare(opts.compare[0], opts.compare[1]);
  try {
    return measure(opts, nodes);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "swarm bench: %s\n", e.what());
    return 1;
  }
}

} // namespace swarm::tools
