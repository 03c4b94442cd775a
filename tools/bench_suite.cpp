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
#include "tools/bench_stats.hpp"
#include "tools/command.hpp"

namespace swarm::tools {

namespace {

/// What the command line asked for.
struct bench_options {
  int nodes = 2;
  bool quick = false;
  std::string json_path;
  std::string plot_dir;
  std::string filter;
  std::vector<std::string> compare; // OLD, NEW
};

void bench_usage(std::FILE* out) {
  std::fprintf(
      out, "usage: swarm bench [--nodes N] [--quick] [--filter NAME] [--json FILE] "
           "[--plot DIR]\n"
           "       swarm bench --compare OLD.json NEW.json\n"
           "  --nodes N    1: single-node figures only; 2 (default): those, then the "
           "figures across two node processes; 3-16: also calls and tasks spread over "
           "N-1 node processes\n"
           "  --quick      fewer repetitions and shorter caps (well under a minute)\n"
           "  --filter S   only the workloads whose name contains S\n"
           "  --json FILE  write every figure as a JSON object of key: number\n"
           "  --plot DIR   write latency.svg and ratios.svg into DIR\n"
           "  --compare    print NEW/OLD for every key of two --json reports\n");
}

/// Parses `args`; returns the exit code to stop with, or -1 to go on.
int parse(const std::vector<std::string>& args, bench_options& opts) {
  bool measuring_option = false;
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
      opts.quick = measuring_option = true;
    } else if (a == "--json") {
      if (!value(opts.json_path)) return 2;
      measuring_option = true;
    } else if (a == "--plot") {
      if (!value(opts.plot_dir)) return 2;
      measuring_option = true;
    } else if (a == "--filter") {
      if (!value(opts.filter)) return 2;
      measuring_option = true;
    } else if (a == "--compare") {
      for (int k = 0; k < 2; ++k) {
        if (i + 1 >= args.size() || args[i + 1].rfind("--", 0) == 0) {
          std::fprintf(stderr,
                       "swarm bench: --compare needs two files, OLD.json NEW.json\n");
          return 2;
        }
        opts.compare.push_back(args[++i]);
      }
    } else if (a == "--nodes") {
      std::string v;
      if (!value(v)) return 2;
      measuring_option = true;
      if (v.empty() || v.size() > 2 ||
          v.find_first_not_of("0123456789") != std::string::npos || std::stoi(v) < 1 ||
          std::stoi(v) > 16) {
        std::fprintf(
            stderr,
            "swarm bench: --nodes expects a node count from 1 to 16 (this process "
            "and N-1 node processes on 127.0.0.1), not '%s'\n",
            v.c_str());
        return 2;
      }
      opts.nodes = std::stoi(v);
    } else if (a == "--help" || a == "-h") {
      bench_usage(stdout);
      return 0;
    } else {
      std::fprintf(stderr, "swarm bench: unknown option '%s'\n", a.c_str());
      bench_usage(stderr);
      return 2;
    }
  }
  if (!opts.compare.empty() && measuring_option) {
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
int measure(const bench_options& opts) {
  auto t0 = bench_clock::now();
  bench_session s{opts.quick, opts.filter};
  std::printf("swarm bench --nodes %d%s%s%s: measuring...\n\n", opts.nodes,
              opts.quick ? " --quick" : "", opts.filter.empty() ? "" : " --filter ",
              opts.filter.c_str());
  std::fflush(stdout);
  measure_local(s);
  if (opts.nodes >= 2) measure_remote(s, opts.nodes);
  if (s.rows().empty() && s.curves().empty()) {
    std::fprintf(stderr,
                 "swarm bench: --filter '%s' matches no workload; the workloads:\n",
                 opts.filter.c_str());
    print_workloads(stderr, s);
    return 2;
  }
  print_rows(s.rows());
  print_curves(s.curves());
  std::printf("\nmedian of %d repetitions after a warm-up; %zu callers for n:n, 1:n and "
              "multi-client; total %.1f s\n",
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

int run_bench(const std::vector<std::string>& args) {
  bench_options opts;
  if (auto rc = parse(args, opts); rc >= 0) return rc;
  if (!opts.compare.empty()) return run_compare(opts.compare[0], opts.compare[1]);
  try {
    return measure(opts);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "swarm bench: %s\n", e.what());
    return 1;
  }
}

} // namespace swarm::tools
