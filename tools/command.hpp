#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "framework/cluster_config.hpp"

namespace swarm {
class application;
} // namespace swarm

namespace swarm::tools {

// What each subcommand's options say, parsed by one CLI11 parser (swarm_main.cpp).

/// The validated cluster file at `path`, or nothing after printing why not as
/// `swarm CMD: ...`.
std::optional<cluster_config> load(const char* cmd, const std::string& path);

/// `swarm job submit|status|logs|stop`: programs run on the head as jobs.
struct job_options {
  std::string action; // submit, status, logs, stop
  std::string config;
  uint64_t id = 0;
  std::vector<std::string> argv; // submit: the program and its arguments
  std::string cwd;
  bool follow = false; // logs: until the job ends; submit: then exit as it did
};
int run_job(const job_options& opts);

/// `swarm demo`: the demo workload on an embedded node, a local cluster or as a node.
struct demo_options {
  size_t tasks = 20000;
  std::optional<double> cpus;
  size_t nodes = 1;   // more than 1: a local cluster of that many processes
  std::string config; // with `node`: run as that node of a cluster
  std::string node;
};
int run_demo(const demo_options& opts);

/// `swarm bench`: measures the runtime beside floors from the same run; with `compare`
/// (OLD, NEW), compares two reports instead.
struct bench_options {
  std::string nodes = "2";
  /// Above 0: the control-plane simulation of this many nodes instead (`measure_sim`).
  int sim = 0;
  bool quick = false;
  std::string json_path;
  std::string plot_dir;
  std::string filter;
  std::vector<std::string> compare;
  bool measuring_option = false; // any option but `compare` was given
};
int run_bench(const bench_options& opts);

/// `swarm start`: runs a node of the cluster until stopped, with user code from
/// `libraries` (and the file's `[code] libraries`); with `wait`, says when that many
/// nodes are alive, or stops after `wait_timeout_s` seconds. With `address`, the node
/// joins the cluster whose head is there, as a node its file does not list.
struct start_options {
  std::string config;
  std::string node;
  std::string address; // the head's host:port: join as a node not in the file
  uint16_t port = 0;
  std::string advertise;
  std::optional<double> cpus;
  std::optional<size_t> gpus;
  std::string resources; // "name=amount,...": custom resources to offer
  std::string node_type; // the autoscaler's node type it was started as
  std::vector<std::string> libraries;
  size_t wait = 0;
  double wait_timeout_s = 30;
  bool no_metrics = false;   // else served on the file's metrics_port, or port + 1000
  bool no_dashboard = false; // else the head serves it on dashboard_port, or port + 2000
};
int run_start(const start_options& opts);

/// `swarm status`: the head's node table, once `wait` nodes are alive (0: at once;
/// for at most `wait_timeout_s` seconds).
struct status_options {
  std::string config;
  size_t wait = 0;
  double wait_timeout_s = 30;
};
int run_status(const status_options& opts);

/// `swarm list tasks|actors|objects|failures`: what the alive nodes run or hold, one line
/// each, only those of `node`, whose line contains `filter`, or in `state`, when given.
struct list_options {
  std::string what;
  std::string config;
  std::string node;
  std::string filter;
  std::string state;
};
int run_list(const list_options& opts);

/// `swarm timeline`: the tasks, actor calls and pulls that ended lately on the alive
/// nodes (or `node`), written to `out` as a Chrome / Perfetto trace.
struct timeline_options {
  std::string config;
  std::string out;
  std::string node;
};
int run_timeline(const timeline_options& opts);

/// `swarm logs`: the last `lines` lines of node `node`'s log.
struct logs_options {
  std::string config;
  std::string node;
  size_t lines = 100;
};
int run_logs(const logs_options& opts);

/// `swarm stop`: stops one node, waits for it and prints what it did with its work, or
/// asks all of them to stop (`node` empty).
struct stop_options {
  std::string config;
  std::string node;
};
int run_stop(const stop_options& opts);

/// `swarm check-config`: validates a cluster file (and that it names `node`).
struct check_config_options {
  std::string config;
  std::string node;
};
int run_check_config(const check_config_options& opts);

/// Registers what nodes started by the CLI can run: the demo's and the benchmark's
/// functions and actor types.
void register_builtins(application& app);

/// `swarm floor-peer tcp-echo|tcp-stream|caf-echo PORT [BYTES]` (internal): the child
/// side of the cross-process floors in tools/bench_floors.hpp. Returns the exit code.
int run_floor_peer(const std::vector<std::string>& args);

} // namespace swarm::tools
