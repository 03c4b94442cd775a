#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "framework/cluster_config.hpp"
#include "framework/resources.hpp"

namespace swarm {

/// A cluster of `nodes` node processes on 127.0.0.1 that `runtime` starts by itself, for
/// tests, demos and trying Swarm out: this process becomes the head and the driver, and
/// the workers are forked from it before any thread starts, so they run the same
/// registrations. The workers stop (SIGTERM, then SIGKILL after a grace period) when the
/// runtime is destroyed, and die with this process.
struct local_cluster_config {
  /// Node processes in all, this one included (at least 1).
  size_t nodes = 3;
  /// CPUs each node offers; default: each discovers the machine.
  std::optional<double> cpus_per_node;
  /// Further resources each worker node offers (not the head), e.g. {"special": 1}.
  resource_set worker_resources;
  size_t gcs_shards = 1;                             ///< as `cluster_config` has it
  std::chrono::milliseconds heartbeat_interval{200}; ///< as `cluster_config` has it
  std::chrono::milliseconds node_timeout{2000};      ///< as `cluster_config` has it
  size_t inline_threshold = 100 * 1024;              ///< as `cluster_config` has it
  /// How long the runtime waits for every worker to join before it gives up.
  std::chrono::milliseconds join_timeout{15000};
};

/// `n` distinct TCP ports free on 127.0.0.1 right now (bound together, then released).
result<std::vector<uint16_t>> free_local_ports(size_t n);

/// The cluster file `local_cluster_config` stands for: nodes "head", "worker-1", ...
/// on free ports of 127.0.0.1, with a fresh random secret.
result<cluster_config> make_local_cluster(const local_cluster_config& cfg);

} // namespace swarm
