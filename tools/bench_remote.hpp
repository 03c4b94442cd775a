#pragma once

#include "tools/bench_session.hpp"

namespace swarm::tools {

/// Starts a second node process on 127.0.0.1 (only when the session's filter selects a
/// two-node workload), measures remote actor calls, latency by message size, tasks and a
/// 100 MB transfer beside bare TCP and bare CAF between two processes, and adds them to
/// the session (medians of several repetitions).
void measure_remote(bench_session& s);

} // namespace swarm::tools
