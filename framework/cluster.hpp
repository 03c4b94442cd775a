#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/result.hpp"
#include "framework/application.hpp"
#include "framework/cluster_config.hpp"
#include "framework/resources.hpp"

namespace swarm {

/// One row of the head's node table.
struct node_status {
  std::string name;    ///< its name in the cluster
  std::string address; ///< where other nodes reach it
  uint16_t port = 0;   ///< its port there
  bool head = false;   ///< whether it is the head
  bool client = false; ///< a program connected as a client (`client_options`)
  bool alive = false;  ///< whether the head finds it alive
  resource_set total;  ///< the resources it offers
  resource_set available;    ///< of `total`, those no running work holds
  uint32_t queued = 0;       ///< tasks waiting for a worker
  uint32_t running = 0;      ///< tasks running on its workers
  uint64_t last_seen_ms = 0; ///< since the head last heard from it
  uint64_t store_bytes = 0;  ///< its object store in use, pulled copies included
  uint64_t store_capacity = 0; ///< its object store's size in memory
  uint64_t pulled_bytes = 0; ///< of `store_bytes`: copies pulled from other nodes
  /// Beside `store_bytes`, within the capacity: memory of freed values kept for new ones.
  uint64_t pooled_bytes = 0;
  uint64_t pool_reuses = 0; ///< values made in kept memory since the node started
  uint64_t spilled_bytes = 0; ///< bytes its store spilled to disk, there now
  uint64_t spills = 0;        ///< objects it moved to disk since it started
  uint64_t restores = 0;      ///< spilled objects it read back since it started
  uint64_t cache_hits = 0;    ///< reads of other nodes' objects it found in memory
  uint64_t cache_misses = 0;  ///< reads of other nodes' objects it pulled
  uint64_t evictions = 0;     ///< kept copies it dropped to make room
  /// Its tasks queued for or at its workers, not finished, by priority (highest first):
  /// what the global scheduler weighs spilled work of each priority by.
  std::vector<std::pair<int32_t, uint32_t>> by_priority;
  /// What it said it did as it stopped last (empty: it did not stop since it joined, or
  /// was killed): the tasks it gave back, the results it handed over.
  std::string stop_report;
};

/// One row of the control store's job table: a driver program on some node.
struct job_status {
  uint64_t id = 0;         ///< the job's number, unique in the cluster
  std::string driver;      ///< the node it runs on
  uint32_t pid = 0;        ///< its driver's process id there
  bool running = false;    ///< false once its driver ended (or its node died)
  uint64_t started_ms = 0; ///< wall clock, ms since the epoch
  uint64_t ended_ms = 0;   ///< 0 while running
};

/// A node the head's autoscaler started, or a node type whose launches failed.
struct launch_status {
  std::string node;      ///< empty for a failed type
  std::string type;      ///< its `[[autoscaler.node_type]]`
  std::string state;     ///< starting, up, stopping, failed
  std::string why;       ///< why it started or stops; how the launches failed
  uint64_t since_ms = 0; ///< how long it has been in `state`
};

/// What `cluster_status` reports: the head's node and job tables.
struct cluster_state {
  std::vector<node_status> nodes; ///< every node and client the head knows, dead or alive
  std::vector<job_status> jobs;   ///< the drivers' jobs
  /// What the head's autoscaler started and why (empty without one).
  std::vector<launch_status> launches;
  /// Where each shard of the key-value table is served, its chain in order (the node
  /// serving it first); empty unless `gcs_hosts` > 1.
  std::vector<std::vector<std::string>> kv_shards;

  /// How many nodes are alive (clients are none).
  size_t alive() const;
};

/// How `serve` runs a node.
struct serve_options {
  /// When non-zero: once this many nodes are alive (this one included), a line
  /// "[swarm NODE] ready: ..." goes to stdout; when they are not within `wait_timeout`,
  /// the node stops and `serve` returns 1, naming the nodes that are not alive.
  size_t wait_nodes = 0;
  std::chrono::milliseconds wait_timeout{30'000}; ///< how long `wait_nodes` may take
};

/// What `serve` returns when a fault took the CUDA context of one of the node's GPUs:
/// CUDA cannot open it again in the same process, so the node stops (its objects are
/// remade from lineage elsewhere) to be started again by whatever supervises it.
inline constexpr int exit_gpu_lost = 3;

/// Runs node `node` of the cluster `cfg` in this process until `swarm stop` (or
/// SIGINT/SIGTERM) and returns the exit code: 0 after a stop, 1 when it could not serve,
/// `exit_gpu_lost` when it lost a GPU. A user's program calls it to serve as a
/// node with its own registered functions and actor types.
int serve(const application& app, const cluster_config& cfg, const std::string& node,
          const serve_options& opts = {});

/// How a program connects to a running cluster as a client: `runtime(app, options)`.
struct client_options {
  /// The head's address and port, as the cluster's nodes reach it.
  std::string address;
  uint16_t port = 0; ///< the head's port
  /// The cluster's secret: the head refuses a client that cannot prove it.
  std::string secret;
  /// Which of its connections are encrypted with TLS 1.3, as the cluster file's `[tls]`
  /// says: by default those that leave the host, with a key derived from `secret`.
  wire_msg::tls_options tls;
  /// Its name in the cluster; empty: "client-HOST-PID-" and 8 random hex digits, so a
  /// process connecting again is another client. Must differ from every node's.
  std::string name;
  /// How long to wait for the head's answer.
  std::chrono::milliseconds timeout{10'000};
};

/// The cluster a client of `options` joins, as the head describes it, with the client as
/// its last node (`node_spec::client`, no CPUs, not listening); an error naming the
/// address when the head cannot be reached, refuses the secret or does not answer.
result<cluster_config> client_cluster(const client_options& options);

/// How a node joins a running cluster by its head's address (`swarm start --address`),
/// with no row in the cluster's file.
struct join_options {
  /// The head's address and port, the cluster's secret, the node's name (empty:
  /// "node-HOST-PID") and how long to wait for the head.
  client_options head;
  /// What the node offers and where it is reached: `address` (empty: this host's address
  /// on the route to the head), `port` (0: any free one), `cpus`, `gpus`, `resources`,
  /// metrics. Its name, role and owner index are set by the join.
  node_spec node;
};

/// The cluster a node of `options` joins, as the head describes it, with the node as its
/// last (a worker with the owner index the head gave it); an error naming the address
/// when the head cannot be reached, refuses the secret, or already has a live node, or a
/// node in its file, of that name.
result<cluster_config> join_cluster(const join_options& options);

/// The client options a program started by `swarm job submit` finds in its environment
/// (`SWARM_ADDRESS`, host:port of the head, and `SWARM_SECRET`); an error naming what
/// is missing or malformed.
result<client_options> client_options_from_env();

/// The head's address and port of `text` ("host:port"), the rest of the options unset;
/// an error naming `what` (where the text came from) when it is malformed.
result<client_options> head_address(const std::string& text, const std::string& what);

/// A program submitted to run on the head as a job of the cluster.
struct job_state {
  uint64_t id = 0;         ///< the job's number on the head
  std::string command;     ///< its command line
  uint32_t pid = 0;        ///< its process id on the head
  std::string state;       ///< running, succeeded, failed, stopped
  int32_t exit_code = 0;   ///< or the signal that ended it, negated
  uint64_t started_ms = 0; ///< wall clock, ms since the epoch
  uint64_t ended_ms = 0; ///< 0 while running
};

/// Runs `argv` on the head of `cfg` (in `cwd`, empty: the head's), its output kept
/// there; the job as it started, or why it could not. This and the calls below carry
/// `cfg.jobs.token`, without which the head refuses them.
result<job_state> submit_job(const cluster_config& cfg,
                             const std::vector<std::string>& argv, const std::string& cwd,
                             std::chrono::milliseconds timeout);

/// The jobs submitted to the head of `cfg` since it started (`id` 0), or one.
result<std::vector<job_state>> list_jobs(const cluster_config& cfg, uint64_t id,
                                         std::chrono::milliseconds timeout);

/// What job `id` wrote from byte `offset` (at most 1 MiB), where that ends, and the job.
struct job_output {
  job_state job;    ///< the job as it is now
  std::string text; ///< what it wrote from the offset asked for
  uint64_t end = 0; ///< the offset `text` ends at: where the next read starts
};

/// What job `id` of the head of `cfg` wrote from byte `offset`, at most 1 MiB of it.
result<job_output> job_output_from(const cluster_config& cfg, uint64_t id,
                                   uint64_t offset, std::chrono::milliseconds timeout);

/// Stops job `id`: SIGTERM to its process group, SIGKILL 5 s later.
result<job_state> stop_job(const cluster_config& cfg, uint64_t id,
                           std::chrono::milliseconds timeout);

/// Asks the head of `cfg` for its node and job tables.
result<cluster_state> cluster_status(const cluster_config& cfg,
                                     std::chrono::milliseconds timeout);

/// What a "timeline" row is, in its `listed::numbers[0]`.
namespace timeline_kind {
constexpr int64_t task = 0;       ///< a task run by a worker
constexpr int64_t actor_call = 1; ///< a call run by an actor
constexpr int64_t transfer = 2; ///< a pull of an object from another node
} // namespace timeline_kind

/// One task, actor or object a node reported to `list_cluster`.
struct listed {
  std::string node;   ///< the node that reported it
  std::string id;     ///< a task's result object, an actor's name, an object's id
  std::string name;   ///< a task's function, an actor's type
  std::string state;  ///< queued, dispatched, running; alive, dead; stored, spilled
  std::string detail; ///< priority and attempt; why an actor died; an object's bytes;
                      ///< a timeline event's track ("worker 0", "actor NAME", "pulls
                      ///< from NODE")
  /// A timeline event's `timeline_kind`, when it was queued (0: not known), started and
  /// ended (wall clock, microseconds since the epoch), and the bytes it moved.
  std::vector<int64_t> numbers;
};

/// What the alive nodes of `cfg` (or only `node`) run or hold: `what` is "tasks",
/// "actors", "objects", "timeline" (the last tasks, actor calls and pulls that ended on
/// each node), "logs" (the last lines of each node's log, in `detail`), or one of
/// `list_node`'s. A node that does not answer within `timeout` is an error naming it.
result<std::vector<listed>> list_cluster(const cluster_config& cfg,
                                         const std::string& what, const std::string& node,
                                         std::chrono::milliseconds timeout);

/// One list to ask a node for: `what` as `list_cluster` takes it, at most `limit` rows
/// (0: all).
struct list_query {
  std::string what;   ///< a list's name, as `list_cluster` takes it
  uint32_t limit = 0; ///< at most this many rows; 0: all
};

/// What a node answered to one `list_query`.
struct node_list {
  std::vector<listed> rows; ///< the rows it answered, at most the query's limit
  uint64_t total = 0; ///< the rows it had before the limit
};

/// Asks node `node` of `cfg` for each of `queries` over one connection; besides
/// `list_cluster`'s lists, "summary" (per function, a row with id "function" and its
/// submitted, running, finished and failed tasks in `numbers`; a row "actors" with the
/// alive and dead actors; a row "objects" with objects, bytes and pulled bytes) and
/// "failures" (the last tasks that failed, newest first, the error in `detail`).
/// A node the file does not list (one that joined by the head's address) is found in
/// the head's table.
result<std::vector<node_list>> list_node(const cluster_config& cfg,
                                         const std::string& node,
                                         const std::vector<list_query>& queries,
                                         std::chrono::milliseconds timeout);

/// `list_node` of a node as `cluster_status` lists it (at its address there).
result<std::vector<node_list>> list_node(const cluster_config& cfg, const node_status& node,
                                         const std::vector<list_query>& queries,
                                         std::chrono::milliseconds timeout);

/// Asks node `node` (every node when empty) of `cfg` to stop. Every node: through the
/// head, or, when the head does not answer, each other node of the file itself. A node
/// the file does not list is found in the head's table.
result<void> stop_cluster(const cluster_config& cfg, const std::string& node,
                          std::chrono::milliseconds timeout);

/// Waits, up to `timeout`, until node `node` is no longer alive in the head's table (it
/// stopped, or left it); returns what it said it did as it stopped, which may follow by
/// up to 2 s (empty when it said nothing). A `timeout` error when it is still alive then,
/// with what it said so far; `node_unreachable` when the head's table cannot be read (the
/// head is gone).
result<std::string> wait_stopped(const cluster_config& cfg, const std::string& node,
                                 std::chrono::milliseconds timeout);

} // namespace swarm
