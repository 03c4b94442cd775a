// Elastic clusters: from a node's start to the first task run there, for a node of the
// file (the floor), one joining by the head's address, and one the autoscaler starts.

#include <algorithm>
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

// Checks `done` every `pause` until it holds; past `limit`, fails with `why`.
template <class Done>
void wait_until(std::chrono::milliseconds limit, std::chrono::milliseconds pause,
                Done done, const std::string& why) {
  for (auto deadline = bench_clock::now() + limit; !done();) {
    if (bench_clock::now() > deadline) throw std::runtime_error(why);
    std::this_thread::sleep_for(pause);
  }
}

// Waits (bounded) until fewer than `n` nodes are alive in the head's view.
void wait_fewer(cluster_nodes& c, size_t n, const std::string& what) {
  wait_until(
      30s, 20ms,
      [&] {
        auto st = cluster_status(c.cfg, 1s);
        return st && st->alive() < n;
      },
      what + ": still " + std::to_string(n) + " nodes alive after 30 s");
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

// The number before `what` in `text` ("gives back 12 task(s)"); -1 when missing.
double count_before(const std::string& text, const std::string& what) {
  auto at = text.find(what);
  if (at == std::string::npos || at < 2) return -1;
  auto from = text.find_last_of(' ', at - 2);
  from = from == std::string::npos ? 0 : from + 1;
  try {
    return std::stod(text.substr(from, at - 1 - from));
  } catch (const std::exception&) {
    return -1;
  }
}

// Waits for `refs` to be done, without pulling their values here.
template <class T>
void wait_done(std::vector<object_ref<T>>& refs, const std::string& what) {
  wait_until(
      60s, 5ms,
      [&] {
        return std::all_of(refs.begin(), refs.end(), [](auto& r) { return r.ready(); });
      },
      what + ": not done within 60 s");
}

constexpr size_t drain_parts = 16;
constexpr int drain_nap_ms = 20;

// The drain of a node joined by address that holds `drain_bytes` of primary objects the
// head owns, with tasks queued: from `swarm stop --node` to its exit, its queued work
// given back and its objects handed over. The floor: the head making as many bytes, in
// as many objects, on a node of the file (n3) and reading them, submit to last value.
void measure_drain(bench_session& s, cluster_nodes& c, int nodes) {
  auto n = static_cast<size_t>(nodes);
  auto head = c.cfg.head().address + ":" + std::to_string(c.cfg.head().port);
  auto part = static_cast<int64_t>(s.plan().drain_bytes / drain_parts);
  std::vector<double> pulls, drains, given_back, handed;
  auto make = [&](const task_options& on) {
    std::vector<object_ref<std::vector<uint8_t>>> refs;
    for (size_t i = 0; i < drain_parts; ++i)
      refs.push_back(c.rt->submit(on, c.fns.make_bytes, part));
    wait_done(refs, "the drained objects");
    return refs;
  };
  auto read_all = [&](std::vector<object_ref<std::vector<uint8_t>>>& refs,
                      const std::string& what) {
    for (auto& r : refs)
      if (r.get(120s).value().size() != static_cast<size_t>(part))
        throw std::runtime_error(what + ": an object of the wrong size");
  };
  for (int r = 0; r < s.plan().reps; ++r) {
    task_options on_n3;
    on_n3.node = "n3";
    auto t0 = bench_clock::now();
    auto listed = make(on_n3);
    read_all(listed, "made on n3");
    pulls.push_back(seconds_since(t0));
    listed.clear();

    auto name = "drained-" + std::to_string(r);
    auto node = start_self({"start", "--config", c.file(), "--address", head, "--node",
                            name, "--cpus", "1", "--no-metrics"});
    wait_alive(c, n + 1, "a node joining to be drained");
    task_options on_it;
    on_it.node = name;
    auto held = make(on_it);
    // As many naps as fill every node's queue by about 100: the spills queue them at
    // the least busy nodes, this one among them.
    task_options retried;
    retried.max_retries = 3;
    std::vector<object_ref<int>> naps;
    for (size_t i = 0; i < 100 * (n + 1); ++i)
      naps.push_back(c.rt->submit(retried, c.fns.nap, drain_nap_ms));
    t0 = bench_clock::now();
    auto stop = stop_cluster(c.cfg, name, 5s);
    if (!stop) throw std::runtime_error("draining " + name + ": " + stop.err().message);
    auto report = wait_stopped(c.cfg, name, 120s);
    if (!report)
      throw std::runtime_error("draining " + name + ": " + report.err().message);
    // Its row goes as it begins to stop; the hand-over ends with its process.
    wait_until(
        120s, 1ms, [&] { return self_exited(node); },
        "draining " + name + ": it did not exit within 120 s");
    drains.push_back(seconds_since(t0));
    given_back.push_back(count_before(*report, "task(s) queued or running"));
    handed.push_back(count_before(*report, "result(s) over"));
    for (auto& t : naps)
      if (!t.get(120s))
        throw std::runtime_error("a task queued on the drained node failed");
    read_all(held, "handed over by the drained node");
  }
  auto floor = s.floor("drain_floor_pull_seconds", "s", [&] { return median(pulls); });
  s.add(versus("drain_seconds", median(drains), "s", "drain_floor_pull_seconds", floor));
  s.add(floor_row("drain_tasks_given_back", median(given_back), "tasks"));
  s.add(floor_row("drain_objects_handed_over", median(handed), "objects"));
}

} // namespace

void measure_elastic(bench_session& s, cluster_nodes& c, int nodes) {
  auto n = static_cast<size_t>(nodes);
  auto head = c.cfg.head().address + ":" + std::to_string(c.cfg.head().port);
  // Each part runs when its row is asked for (`--filter elastic_join`), or all three
  // (`--filter elastic`): the drain's hundreds of tasks per node need not run for a join
  // measured beside 64 nodes.
  bool all = s.wants("elastic");
  bool joins = s.wants("elastic_join");
  bool scales = all || s.wants("autoscale_up");
  std::vector<double> listed, joined, scaled;
  for (int r = 0; (joins || scales) && r < s.plan().reps; ++r) {
    // A node of the file, killed and started again.
    c.kill("n2");
    wait_fewer(c, n, "n2 killed");
    task_options on_n2;
    on_n2.node = "n2";
    listed.push_back(first_task(
        c, n, on_n2, [&] { c.start("n2"); }, "n2 started again"));
    if (joins) {
      // A node the file does not list, joining by the head's address.
      auto name = "joined-" + std::to_string(r);
      task_options on_joined;
      on_joined.node = name;
      std::shared_ptr<void> joiner;
      joined.push_back(first_task(
          c, n + 1, on_joined,
          [&] {
            joiner = start_self({"start", "--config", c.file(), "--address", head,
                                 "--node", name, "--cpus", "1", "--no-metrics"});
          },
          "a node joining by address"));
      joiner.reset();
      wait_fewer(c, n + 1, "the joined node killed");
    }
    if (scales) {
      // A node the autoscaler starts for work only its type fits, stopped once idle.
      task_options scaled_work;
      scaled_work.resources.set("scaled", 1);
      auto t0 = bench_clock::now();
      c.rt->submit(scaled_work, c.fns.noop, 1).get(60s).value();
      scaled.push_back(seconds_since(t0));
      wait_fewer(c, n + 1, "the autoscaled node idle");
    }
  }
  if (!listed.empty()) {
    auto floor = s.floor("listed_node_start_to_first_task_seconds", "s",
                         [&] { return median(listed); });
    if (joins)
      s.add(versus("elastic_join_seconds", median(joined), "s",
                   "listed_node_start_to_first_task_seconds", floor));
    if (scales)
      s.add(versus("autoscale_up_seconds", median(scaled), "s",
                   "listed_node_start_to_first_task_seconds", floor));
  }
  if (all || s.wants("drain_seconds")) measure_drain(s, c, nodes);
}

} // namespace swarm::tools
