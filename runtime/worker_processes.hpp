#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "framework/application.hpp"
#include "framework/cluster_config.hpp"
#include "base/result.hpp"

namespace swarm {

/// Node processes forked from this one, each serving one node of a cluster file; stopped
/// by pid (SIGTERM, then SIGKILL after a grace period) when destroyed. The children die
/// with this process too (PR_SET_PDEATHSIG).
class worker_processes {
public:
  /// Forks one process per name in `nodes`, each running `serve(app, cfg, name)`. Fork is
  /// only safe while this process runs a single thread: otherwise an error says so.
  static result<std::unique_ptr<worker_processes>>
  fork_nodes(const application& app, const cluster_config& cfg,
             const std::vector<std::string>& nodes);

  ~worker_processes();

  worker_processes(const worker_processes&) = delete;
  worker_processes& operator=(const worker_processes&) = delete;

  /// The children that exited already, with their exit codes ("worker-1 exited with
  /// code 1"); empty while all run.
  std::string exited();

private:
  worker_processes() = default;

  std::vector<std::pair<std::string, pid_t>> children_;
  std::vector<std::string> exited_;
};

} // namespace swarm
