#pragma once

#include <vector>

#include "framework/application.hpp"
#include "tools/bench_report.hpp"

namespace swarm::tools {

/// Registers what `swarm bench --nodes 2` runs on the other node; `swarm start` registers
/// it too, so any node the CLI starts can serve the benchmark.
void register_remote_bench(application& app);

/// Starts a second node process on 127.0.0.1, measures remote actor calls, tasks and a
/// 100 MB transfer beside bare TCP and bare CAF between two processes, and returns the
/// report (medians of several repetitions).
std::vector<figure> measure_remote(bool quick);

} // namespace swarm::tools
