#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "tools/bench_report.hpp"

namespace swarm::tools {

/// Repetitions and operation counts of every workload; each repetition also stops at its
/// cap.
struct bench_plan {
  int reps;
  size_t rtt_calls;
  size_t sync_ops;
  size_t batch;
  size_t calls_per_caller; // n:n, 1:n and multi-client workloads
  size_t put_ops;
  size_t get_ops;
  size_t big_ops; // 100 MB puts and gets
  size_t actors_created;
  size_t ref_list_gets; // gets of the object holding 10,000 references
  size_t wait_runs;     // runs of "submit 1,000 tasks, wait for each"
  std::chrono::milliseconds cap;
  size_t latency_calls; // per message size and repetition
  std::chrono::milliseconds latency_cap;
  size_t remote_pipelined;
  size_t remote_tasks;
  int transfers;
  size_t drain_bytes; // primary objects on a drained node
};

/// The plan of a quick (`--quick`) or a full run.
bench_plan plan_for(bool quick);

/// The message sizes of the latency curves: 64 B to 1 MiB.
std::vector<size_t> latency_sizes();

/// One run of `swarm bench`: the plan, which workloads the filter selects, and the
/// figures measured so far. Floors are measured once per run, by the first workload that
/// needs them.
class bench_session {
public:
  /// `filter`: run only workloads whose name contains it (empty: all).
  bench_session(bool quick, std::string filter);

  const bench_plan& plan() const { return plan_; }

  /// Whether the filter selects workload `name`; every name asked about is listed in the
  /// error when no workload matched.
  bool wants(const std::string& name);

  /// Adds a figure (a curve), and says so on stderr with the time since the run began:
  /// a full run takes minutes.
  void add(figure f);
  void add(latency_curve c);

  /// The floor `key`: measured by `measure` and added as a row the first time, the value
  /// already measured afterwards.
  double floor(const std::string& key, const std::string& unit,
               const std::function<double()>& measure);

  const std::vector<figure>& rows() const { return rows_; }
  const std::vector<latency_curve>& curves() const { return curves_; }
  const std::vector<std::string>& workloads() const { return workloads_; }

  /// Records that workload `name`, selected, could not run here, and why.
  void skip(const std::string& name, const std::string& why);
  /// "name: why" of each workload skipped.
  const std::vector<std::string>& skipped() const { return skipped_; }
  const std::string& filter() const { return filter_; }

private:
  void progress(const std::string& what);

  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  bench_plan plan_;
  std::string filter_;
  std::vector<std::string> workloads_;
  std::vector<std::string> skipped_;
  std::vector<figure> rows_;
  std::vector<latency_curve> curves_;
};

} // namespace swarm::tools
