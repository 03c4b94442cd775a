// Elastic clusters: from a node's start to the first task run there, for a node of the
// file (the floor), one joining by the head's address, and one the autoscaler starts.

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tools/bench_cluster.hpp"
#include "tools/bench_floors.hpp"
#include "tools/bench_remote.hpp"
#include "tools/bench_session.hpp"
#include "tools/bench_stats.hpp"

namespace swarm::tools {

namespace {

using namespace std::chrono_literals;

// Waits (bounded) until `n` nodes are alive in the head's view.
void wait_alive(cluster_nodes& c, size_t n, const std::string& what) {
  if (c.rt->wait_for_nodes(n, 30s) < n)
    throw std::runtime_error(what + ": " + std::to_string(n) +
                             " nodes were not alive within 30 s");
}

// Waits (bounded) until fewer than `n` nodes are alive in the head's view.
void wait_fewer(cluster_nodes& c, size_t n, const std::string& what) {
  for (auto deadline = bench_clock::now() + 30s;;) {
    if (auto st = cluster_status(c.cfg, 1s); st && st->alive() < n) return;
    if (bench_clock::now() > deadline)
      throw std::runtime_error(what + ": still " + std::to_string(n) +
                               " nodes alive after 30 s");
    std::this_thread::sleep_for(20ms);
  }
}

// Seconds from `start()` to the first task run with `opts`, once `n` nodes are alive.
template <class Start>
double first_task(cluster_nodes& c, size_t n, const task_options& opts, Start start,
                  const std::string& what) {
  auto t0 = bench_clock::now();
  start();
  wait_alive(c, n, what);
  c.rt->submit(opts, c.fns.noop, 1).get(30s).value();
  return seconds_since(t0);
}

} // namespace

void measure_elastic(bench_session& s, cluster_nodes& c, int nodes) {
  auto n = static_cast<size_t>(nodes);
  auto head = c.cfg.head().address + ":" + std::to_string(c.cfg.head().port);
  std::vector<double> listed, joined, scaled;
  for (int r = 0; r < s.plan().reps; ++r) {
    // A node of the file, killed and started again.
    c.kill("n2");
    wait_fewer(c, n, "n2 killed");
    task_options on_n2;
    on_n2.node = "n2";
    listed.push_back(first_task(
        c, n, on_n2, [&] { c.start("n2"); }, "n2 started again"));
    // A node the file does not list, joining by the head's address.
    auto name = "joined-" + std::to_string(r);
    task_options on_joined;
    on_joined.node = name;
    std::shared_ptr<void> joiner;
    joined.push_back(first_task(
        c, n + 1, on_joined,
        [&] {
          joiner = start_self({"start", "--config", c.file(), "--address", head, "--node",
                               name, "--cpus", "1", "--no-metrics"});
        },
        "a node joining by address"));
    joiner.reset();
    wait_fewer(c, n + 1, "the joined node killed");
    // A node the autoscaler starts for work only its type fits, stopped once idle.
    task_options scaled_work;
    scaled_work.resources.set("scaled", 1);
    auto t0 = bench_clock::now();
    c.rt->submit(scaled_work, c.fns.noop, 1).get(60s).value();
    scaled.push_back(seconds_since(t0));
    wait_fewer(c, n + 1, "the autoscaled node idle");
  }
  auto floor = s.floor("listed_node_start_to_first_task_seconds", "s",
                       [&] { return median(listed); });
  s.add(versus("elastic_join_seconds", median(joined), "s",
               "listed_node_start_to_first_task_seconds", floor));
  s.add(versus("autoscale_up_seconds", median(scaled), "s",
               "listed_node_start_to_first_task_seconds", floor));
}

} // namespace swarm::tools
