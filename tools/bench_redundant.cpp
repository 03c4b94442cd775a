#include "tools/bench_redundant.hpp"

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tools/bench_report.hpp"
#include "tools/bench_stats.hpp"

namespace swarm::tools {

namespace {

using namespace std::chrono_literals;

constexpr int nap_ms = 300;

// The node running the task `fn` first, by the cluster's task list; empty when none
// runs it within 2 s.
std::string node_running(cluster_nodes& c, const std::string& fn) {
  for (int i = 0; i < 400; ++i) {
    if (auto rows = list_cluster(c.cfg, "tasks", "", 1s))
      for (auto& row : *rows)
        if (row.name == fn && row.state == "running") return row.node;
    std::this_thread::sleep_for(5ms);
  }
  return {};
}

} // namespace

void measure_redundant(bench_session& s, cluster_nodes& c, int nodes) {
  if (nodes < 3 || !s.wants("redundant_task_node_killed")) return;
  auto& p = s.plan();
  auto& rt = *c.rt;
  task_options once; // on a node with `spare`: never the head
  once.resources.set("spare", 1);
  once.max_retries = 3;
  auto twice = once;
  twice.redundancy = 2;
  // Seconds from the submit to the result; with `kill`, the node running it is killed
  // as soon as it runs, and started again afterwards.
  auto run = [&](const task_options& o, bool kill) {
    auto t0 = bench_clock::now();
    auto r = rt.submit(o, c.fns.nap, nap_ms);
    std::string victim;
    if (kill) {
      victim = node_running(c, "bench.nap");
      check(!victim.empty(), "no node ran the task within 2 s");
      // Half way through: a retry loses what ran.
      std::this_thread::sleep_for(std::chrono::milliseconds(nap_ms / 2));
      c.kill(victim);
    }
    check(r.get(30s).value() == nap_ms, "a task whose node was killed");
    double secs = seconds_since(t0);
    if (kill) c.restart(victim);
    return secs;
  };
  std::vector<double> plain, retried, redundant;
  for (int r = 0; r < p.transfers; ++r) {
    plain.push_back(run(once, false));
    retried.push_back(run(once, true));
    redundant.push_back(run(twice, true));
  }
  s.floor("task_300ms_seconds", "s", [&] { return median(plain); });
  double again =
      s.floor("retried_task_node_killed_seconds", "s", [&] { return median(retried); });
  s.add(versus("redundant_task_node_killed_seconds", median(redundant), "s",
               "retried_task_node_killed_seconds", again));
}

} // namespace swarm::tools
