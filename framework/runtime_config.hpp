#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include "base/node_log.hpp"
#include "framework/resources.hpp"

namespace swarm {

/// How a node's HTTP endpoints (its metrics, the head's dashboard) serve requests: each
/// must arrive and be answered within `request_timeout`, `threads` serve slow clients
/// side by side, and with a `token` only a request carrying `Authorization: Bearer
/// <token>` is answered (the dashboard's page itself, which holds no data, is open to
/// all).
struct http_config {
  std::string token;                               ///< empty: no token asked
  size_t threads = 8;                              ///< requests served side by side
  std::chrono::milliseconds request_timeout{5000}; ///< to arrive and be answered
};

/// How an embedded node is set up. Every field has a safe default; unset counts are
/// discovered from the machine.
struct runtime_config {
  /// CPUs to offer; default: the cores hwloc finds.
  std::optional<double> cpus;
  /// Further resources to offer (GPUs, memory, custom names). `GPU` defaults to the
  /// devices found and `gpu_memory` to their memory in bytes, summed.
  resource_set extra_resources;
  /// What runs GPU work: "" (CUDA when Swarm was built with it and finds devices,
  /// otherwise none), "none" (no GPU is used, whatever is found), "cuda", or "host":
  /// `GPU` devices (rounded up) simulated in host memory, sharing `gpu_memory` bytes
  /// (default 1 GiB each). No kernel runs on those; buffers, copies between devices and
  /// nodes, memory limits and waits behave as on a GPU, to run and test GPU pipelines on
  /// a machine without one.
  std::string gpu_backend;
  /// Whether a device buffer read by a node process of the same host (same backend) is
  /// mapped there (CUDA IPC: no copy through host memory), and one held there is mapped
  /// here. Off: its bytes go through the host and the bulk path, as between hosts.
  bool gpu_sharing = true;
  /// Pinned host memory kept for reuse, in bytes, by the copies of device buffers to and
  /// from the host that the bulk path sends from (pinning costs about as much as a copy).
  size_t gpu_staging_bytes = size_t{1} << 30;
  /// Streams each device's worker starts with. A running GPU task has one of its own;
  /// the pool grows when more run at once.
  size_t gpu_streams = 4;
  /// Bytes the object store may hold; default: a quarter of physical memory.
  std::optional<size_t> object_store_bytes;
  /// Memory of freed large values the store keeps to copy new values of their types
  /// into, at memcpy speed (fresh memory is faulted in page by page); part of the
  /// store's capacity, given up whenever an object needs the room. Default: a quarter
  /// of the store; 0 keeps none.
  std::optional<size_t> object_pool_bytes;
  /// Whether objects that do not fit in the store go to disk (and come back when read)
  /// rather than being refused: the largest and least recently used of those nobody
  /// reads now go first.
  bool spill = true;
  /// Where they go: a folder `swarm-spill-<node>-<pid>` in this one, removed when the
  /// node stops (or, after a crash, when a node next spills there). Empty: the system's
  /// temporary folder.
  std::string spill_dir;
  /// Bytes that may be on disk at once; 0: as many as the disk holds.
  size_t spill_limit_bytes = 0;
  /// Objects smaller than this live inline with their owner, not in the store.
  size_t inline_threshold = 100 * 1024;
  /// Most task workers not blocked in `get`/`wait` (blocked ones lend their CPU to new
  /// workers and do not count); default four per CPU.
  std::optional<size_t> max_workers;
  /// Scheduler threads for actors and system actors; default: one per core.
  std::optional<size_t> scheduler_threads;
  /// Tasks queued at one worker beyond the one it runs.
  size_t worker_pipeline_depth = 16;
  /// Workers beyond the CPUs on which a task starts at once rather than wait for a
  /// running task of lower priority to end (its CPU lent while it runs); 0: it waits.
  size_t priority_reserve = 1;
  /// Shards of the control store this node runs (a cluster's head runs them all).
  size_t gcs_shards = 1;
  /// More than 1: the key-value table has shards of its own here, which the head places
  /// on this many nodes of the cluster (`cluster_config::gcs_hosts`).
  size_t gcs_hosts = 1;
  /// Where the control store's row tables (node, job, object) persist, one directory
  /// `shard-<i>/` per shard holding a log and a snapshot; a node started again on the
  /// same directory (and `gcs_shards`) finds them. Empty: in memory only.
  std::string gcs_dir;
  /// What the node logs (`SWARM_LOG` in the environment overrides it).
  log_level verbosity = log_level::info;
  /// Where the node's log lines go; empty: stderr, with a timestamp and the node's name.
  log_sink log_to;
  /// Serves the node's metrics in Prometheus' text format at
  /// `http://metrics_address:metrics_port/metrics` (0: a free port); empty: off.
  std::optional<uint16_t> metrics_port;
  std::string metrics_address = "127.0.0.1"; ///< where the metrics listen
  /// How the metrics (and a head's dashboard) serve.
  http_config http;
};

} // namespace swarm
