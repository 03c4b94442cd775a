#pragma once

// Message latency by size: actor calls whose argument and result are a byte vector of
// each size in `latency_sizes()`, beside a floor moving the same bytes each way.

#include "framework/actor_handle.hpp"
#include "tools/bench_report.hpp"
#include "tools/bench_session.hpp"
#include "tools/bench_workloads.hpp"

namespace swarm::tools {

/// The latency of `echo`, an actor on another node, by message size, beside bare TCP
/// ping-pong of the same size between two processes.
latency_curve measure_remote_latency(const bench_plan& p,
                                     const actor_handle<bench_echo>& echo);

} // namespace swarm::tools
