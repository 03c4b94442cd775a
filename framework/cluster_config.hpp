#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "framework/resources.hpp"
#include "framework/runtime_config.hpp"
#include "transport/tls_options.hpp"

namespace swarm {

/// One node of a cluster file.
struct node_spec {
  /// The head holds the cluster's control plane; workers join it.
  enum class role_type { head, worker };

  std::string name;                   ///< unique in the cluster
  std::string address;                ///< where other nodes reach it
  uint16_t port = 0;                  ///< its port there; 0: any free one (a joiner)
  role_type role = role_type::worker; ///< `role = "head"` or `"worker"` in the file
  /// CPUs to offer; empty means "discover" (hwloc).
  std::optional<double> cpus;
  /// GPUs to offer; empty means "discover" (CUDA).
  std::optional<size_t> gpus;
  /// What runs them: empty (CUDA where found), "cuda" or "host" (see
  /// `runtime_config::gpu_backend`).
  std::string gpu_backend;
  /// Whether device buffers pass to and from other node processes of its host by
  /// mapping (see `runtime_config::gpu_sharing`).
  bool gpu_sharing = true;
  /// Custom resources, e.g. {"TPU": 2}.
  resource_set resources;
  /// Where the node serves its Prometheus metrics (on its address); empty: off in a
  /// program's embedded node, the node's port + 1000 in `swarm start`.
  std::optional<uint16_t> metrics_port;
  /// Where the head serves its dashboard, a status web page (on its address); empty:
  /// off in a program's embedded head, the head's port + 2000 in `swarm start`.
  std::optional<uint16_t> dashboard_port;
  /// A program connected with `runtime(app, client_options)`: not a row of the file
  /// (never set by one). Nobody dials it; it dials every node, and runs no work.
  bool client = false;
  /// A client's owner index, given by the head (file nodes use their place in it).
  uint32_t owner_index = 0;
  /// The autoscaler's node type it was started as (`swarm start --node-type`): a head
  /// restarted while it ran finds it its autoscaler's again. Empty: none.
  std::string node_type;
};

/// A kind of node the autoscaler starts (`[[autoscaler.node_type]]`): what one offers,
/// and how many may run.
struct node_type {
  std::string name;       ///< the type's name, `swarm start --node-type`
  double cpus = 1;        ///< CPUs a node of it offers
  size_t gpus = 0;        ///< GPUs a node of it offers
  resource_set resources; ///< custom resources, e.g. {"TPU": 2}
  size_t min = 0;         ///< kept running even when idle
  size_t max = 1;         ///< never more running or starting
  /// A node of it with no work and no object of its own for this long is stopped.
  std::chrono::milliseconds idle_timeout{60'000};

  /// What a node of it offers: CPU, GPU and the custom resources.
  resource_set total() const;
};

/// `[autoscaler]`: nodes started on the head's behalf when work fits no live node but
/// would fit a node type, and stopped when idle. A provider starts and stops one node;
/// its commands run under /bin/sh with SWARM_ADDRESS (the head's host:port),
/// SWARM_SECRET, SWARM_NODE_NAME, SWARM_NODE_TYPE, SWARM_NODE_CPUS, SWARM_NODE_GPUS and
/// SWARM_NODE_RESOURCES ("name=amount,...") in their environment.
struct autoscaler_config {
  /// How nodes are started and stopped.
  enum class provider_type {
    /// The head runs `start_command` as a child process that is the node (by default
    /// its own program: `"$SWARM_PROGRAM" start --address ... --node ... --cpus ...
    /// --gpus ... --resources ...`), and stops it as any node is stopped.
    local,
    /// `start_command` asks something else (a cloud CLI, kubectl) for the node and
    /// returns; `stop_command` gives it back once the node stopped.
    command,
  };
  provider_type provider = provider_type::local; ///< how nodes start and stop
  std::string start_command; ///< starts one node; empty: the program's own `start`
  std::string stop_command;  ///< gives a node back (`command` providers)
  std::vector<node_type> node_types; ///< what it may start; none: no autoscaler
  /// A node launched and not joined by then counts as a failed launch.
  std::chrono::milliseconds launch_timeout{120'000};
  /// Nodes starting at once, at most, in a small cluster (launches are rate-limited so).
  size_t max_launching = 2;
  /// As the cluster grows, up to this many times its live nodes may start at once, when
  /// that is more than `max_launching` (Ray's `upscaling_speed`): 1 lets a cluster double
  /// at a time; 0 keeps `max_launching` whatever the size.
  double upscaling_speed = 1.0;
  /// Nodes that may be starting at once in a cluster of `live` nodes.
  size_t launch_cap(size_t live) const;
  /// The wait before a node type is tried again after a failed launch; doubles with each
  /// failure in a row, up to a minute.
  std::chrono::milliseconds retry_after{2'000};

  /// Whether the file has an autoscaler: one node type or more.
  bool enabled() const { return !node_types.empty(); }
};

/// `[jobs]`: programs run on the head as jobs of the cluster (`swarm job submit`). Off
/// without a token; with one, only who holds it (not merely the cluster's secret) may
/// submit, read or stop jobs. Only the head's file needs the table.
struct jobs_config {
  std::string token; ///< what `swarm job` commands must carry; empty: no jobs
  /// The user jobs run as (the head must be root to switch to it); empty: the head's.
  std::string run_as;

  /// Whether the head runs jobs: it has a token.
  bool enabled() const { return !token.empty(); }
};

/// A whole cluster as one file describes it: every host runs the same binary with the
/// same file and its own node name. See examples/cluster.toml for every key.
struct cluster_config {
  std::string name; ///< the cluster's name: nodes of another refuse each other
  /// Shared by every node; a peer that cannot prove it holds it is dropped.
  std::string secret;
  size_t gcs_shards = 1; ///< control-store shards (keys spread by hash)
  size_t gcs_replication =
      1; ///< nodes holding each shard: the head, then the first others
  /// Nodes that serve the key-value table's shards (the head, then the file's next
  /// nodes), each shard on one of them, replicated along its own chain of
  /// `gcs_replication` nodes; a lost one's shards move to the next member. 1: the head
  /// serves them all.
  size_t gcs_hosts = 1;
  /// Where the head persists its control store (in `<gcs_dir>/<node name>/`); empty:
  /// in memory only, lost when the head stops.
  std::string gcs_dir;
  std::chrono::milliseconds heartbeat_interval{500}; ///< how often nodes tell the head
  /// A node the head hears nothing from for this long is dead (its work goes elsewhere).
  std::chrono::milliseconds node_timeout{2000};
  /// A connection between two nodes idle both ways this long is closed (the next message
  /// dials again); 0: never. A client's connections stay open.
  std::chrono::milliseconds idle_connection{60000};
  /// How long work pinned to a node of the file that has not joined yet waits for it.
  std::chrono::milliseconds join_wait{30000};
  /// How long a node process's stop may take; past it, the process logs the step it hangs
  /// in and exits anyway (code 2).
  std::chrono::milliseconds stop_timeout{20000};
  size_t object_store_bytes = 0; ///< 0: a quarter of each node's memory
  /// Freed values' memory each node keeps for new puts; unset: a quarter of its store.
  std::optional<size_t> object_pool_bytes;
  /// Values up to this size travel inside messages; larger ones through the object
  /// store.
  size_t inline_threshold = 100 * 1024;
  size_t max_message_bytes = 64 << 20; ///< larger frames are refused
  /// `[limits] spill`, `spill_dir`, `spill_limit`: as `runtime_config` has them, for
  /// every node (a relative folder starts at the node's working directory).
  bool spill = true;
  std::string spill_dir;        ///< where they go; empty: the temporary folder
  size_t spill_limit_bytes = 0; ///< bytes on disk at once, per node; 0: no limit
  std::vector<node_spec> nodes; ///< the file's `[[node]]`s, the head among them
  /// `[code] libraries`: libraries of user code `swarm start` loads into every node it
  /// starts (framework/plugin.hpp); relative paths are from the cluster file's folder.
  std::vector<std::string> code_libraries;
  /// `[log] level`: what every node logs.
  log_level verbosity = log_level::info;
  /// `[autoscaler]`: off when it names no node type.
  autoscaler_config autoscaler;
  /// `[http]`: how every node's metrics and the head's dashboard serve.
  http_config http;
  /// `[jobs]`: off when it has no token.
  jobs_config jobs;
  /// `[tls]`: which connections between nodes and clients are encrypted with TLS 1.3
  /// (`mode`: "auto", those that leave the host, by default; "on"; "off"), and with what:
  /// a key derived from `secret`, or certificates (`cert`, `key`, `ca`; relative paths
  /// from the file's folder).
  wire_msg::tls_options tls;

  /// The node named `name`, or an error listing the names there are.
  result<const node_spec*> find(const std::string& name) const;

  /// The head node (exactly one exists in a valid file).
  const node_spec& head() const;

  /// How node `n` of this cluster sets up its runtime.
  runtime_config runtime_for(const node_spec& n) const;
};

/// Parses and validates a cluster file's text. Every error names the place (file, line,
/// column), the key (`node[2].port`) and the reason; unknown keys are errors too.
result<cluster_config> parse_cluster_config(std::string_view text,
                                            const std::string& source_name);

/// Reads and validates the cluster file at `path`.
result<cluster_config> load_cluster_config(const std::string& path);

/// Parses a byte size with an optional unit: "512", "100KiB", "4GiB", "1PiB", "1.5MB".
std::optional<size_t> parse_byte_size(std::string_view text);

} // namespace swarm
