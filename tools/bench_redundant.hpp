#pragma once

#include "tools/bench_cluster.hpp"
#include "tools/bench_session.hpp"

namespace swarm::tools {

/// With more than two nodes: the time to the result of a 300 ms task whose node is
/// killed (SIGKILL) half way through it, run on two nodes at once
/// (`task_options::redundancy`), beside the same task run once with retries, and beside
/// the task with no kill. Each killed node is started again before the next run. Adds
/// them to the session (medians of `transfers` repetitions). Kills nodes: run it last.
void measure_redundant(bench_session& s, cluster_nodes& c, int nodes);

} // namespace swarm::tools
