#pragma once

#include "tools/bench_cluster.hpp"
#include "tools/bench_session.hpp"

namespace swarm::tools {

/// With more than two nodes: one 100 MB object read by every other node at once, in
/// seconds, beside one transfer to one node and the same transfers one after another
/// (each of an object of its own, so no copy helps); and a 100 MB pull by a node from two
/// holders (the head, and a node that read it before) beside a pull from the head alone.
/// Adds them to the session (medians of `transfers` repetitions).
void measure_broadcast(bench_session& s, cluster_nodes& c, int nodes);

} // namespace swarm::tools
