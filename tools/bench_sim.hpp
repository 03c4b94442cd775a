#pragma once

#include "tools/bench_session.hpp"

namespace swarm::tools {

/// `swarm bench --sim N`: the control plane of a cluster of N thin nodes in this process.
/// Each node is its real membership actor (joins, heartbeats, the versioned node table,
/// verdicts), on one actor system, with no workers, store or sockets; what one sends
/// another is encoded as on the wire (to count its bytes) and handed over as a value. The
/// head's membership runs on a thread of its own, as in a node, so its CPU time is its
/// own; its rows feed the real global scheduler. For each size up to N (100, 250, 500,
/// 1,000, 2,000, 4,000 and N; 100 and N with `--quick`) it reports the time to form the
/// cluster, the head's CPU per heartbeat and its idle CPU, the table bytes each node gets
/// per second when idle and when a tenth of the nodes change load every tick, placements
/// per second, and memory per node. Throws when a cluster does not form in time.
void measure_sim(bench_session& s, int nodes, bool quick);

} // namespace swarm::tools
