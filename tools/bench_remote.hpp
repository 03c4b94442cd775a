#pragma once

#include "tools/bench_session.hpp"

namespace swarm::tools {

/// Starts `nodes - 1` node processes on 127.0.0.1 (only when the session's filter selects
/// a workload across nodes), measures remote actor calls, latency by message size, tasks
/// and a 100 MB transfer with the second node beside bare TCP and bare CAF between two
/// processes, and, with more than two nodes, calls and tasks spread over all of them;
/// adds them to the session (medians of several repetitions).
void measure_remote(bench_session& s, int nodes);

/// Remote actor calls (p50, pipelined per second) and 100 MB transfers between two node
/// processes with TLS on every connection, beside the same in the clear: the workload
/// `tls_remote`.
void measure_tls(bench_session& s);

/// Transfers and latency-critical calls between a head and a node in two network
/// namespaces joined by a 1 Gbit/s link, beside bare TCP over it: the workloads `link_`.
/// Skipped without root, `ip` or `tc`.
void measure_link(bench_session& s);

struct cluster_nodes;
/// `elastic_join_seconds` and `autoscale_up_seconds` on cluster `c` of `nodes` nodes:
/// from a node's start to the first task run there, beside a node of the file started
/// again (n2 is killed and started meanwhile).
void measure_elastic(bench_session& s, cluster_nodes& c, int nodes);

} // namespace swarm::tools
