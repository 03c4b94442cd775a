#pragma once

#include <optional>
#include <string>
#include <unordered_map>

#include "actors/scheduling/local_scheduler.hpp"
#include "framework/detail/task_spec.hpp"

namespace swarm::actors {

/// What a node's scheduler knows of each function's tasks, kept by the function itself
/// (stable while the node runs: no string per task): its name, its counts, and its mean
/// run time (microseconds, a moving average of the tasks that ended). Continuations,
/// each with an invoker of its own, share one entry.
class function_stats {
public:
  /// What is known of one function.
  struct entry {
    std::string name;                  ///< the function's, or "(continuations)"
    function_counts counts;            ///< `running` stays 0: the scheduler knows that
    std::optional<double> mean_run_us; ///< empty until one of its tasks ended
  };

  /// The entry of `t`'s function, made at its first task.
  entry& of(const detail::task_spec& t);
  /// The entry of `t`'s function, its run time noted: `t` ended.
  entry& ended(const detail::task_spec& t);
  /// The mean run time of `t`'s function; empty until one of its tasks ended.
  std::optional<double> mean_run_us(const detail::task_spec& t) const;
  /// The counts by function name.
  counts_by_function counts() const;

private:
  std::unordered_map<const void*, entry> entries_;
};

} // namespace swarm::actors
