#pragma once

#include <string>
#include <vector>

namespace swarm {
class application;
} // namespace swarm

namespace swarm::tools {

/// `swarm demo [--tasks N] [--cpus N]`: runs the demo workload on an embedded cluster.
int run_demo(const std::vector<std::string>& args);

/// `swarm bench [--nodes 1|2] [--quick] [--filter S] [--json FILE] [--plot DIR]`:
/// measures the runtime beside floors from the same run; `swarm bench --compare OLD NEW`
/// compares two reports.
int run_bench(const std::vector<std::string>& args);

/// `swarm start --config FILE --node NAME`: runs that node of the cluster until stopped.
int run_start(const std::vector<std::string>& args);

/// `swarm status --config FILE`: the head's node table.
int run_status(const std::vector<std::string>& args);

/// `swarm stop --config FILE [--node NAME]`: stops one node or all of them.
int run_stop(const std::vector<std::string>& args);

/// Registers what nodes started by the CLI can run: the demo's and the benchmark's
/// functions and actor types.
void register_builtins(application& app);

/// `swarm check-config --config FILE [--node NAME]`: validates a cluster file.
int run_check_config(const std::vector<std::string>& args);

/// `swarm floor-peer tcp-echo|tcp-stream|caf-echo PORT [BYTES]` (internal): the child
/// side of the cross-process floors in tools/bench_floors.hpp. Returns the exit code.
int run_floor_peer(const std::vector<std::string>& args);

} // namespace swarm::tools
