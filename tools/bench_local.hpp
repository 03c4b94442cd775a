#pragma once

// The single-node workloads of `swarm bench`: an embedded runtime in this process,
// beside bare-CAF and memory floors measured in the same run. Each file measures one
// area; `measure_local` runs them all in one runtime.

#include <algorithm>
#include <thread>

#include "framework/runtime.hpp"
#include "tools/bench_caf_local.hpp"
#include "tools/bench_session.hpp"
#include "tools/bench_workloads.hpp"

namespace swarm::tools {

/// An embedded runtime with the benchmark registered, and the bare-CAF floor beside it.
struct local_rig {
  local_rig() : fns{register_bench(app)}, rt{app} {}

  application app;
  bench_fns fns;
  runtime rt;
  caf_local_floor caf;
};

/// Callers of the n:n, 1:n and multi-client workloads: one per core, at least 2.
inline size_t bench_parallelism() {
  return std::max<size_t>(2, std::thread::hardware_concurrency());
}

/// The bare-CAF sequential round-trip rate (floor of the sync rates), measured once.
double caf_sync_floor(bench_session& s, local_rig& rig);

/// Resident memory of this process now (KiB); 0 where the kernel cannot tell.
long rss_kib();

/// The bare-CAF pipelined message rate (floor of the async rates), measured once.
double caf_pipelined_floor(bench_session& s, local_rig& rig);

/// Runs every single-node workload the session's filter selects.
void measure_local(bench_session& s);

/// Actor calls (1:1, 1:n, n:n, sync and async, with a payload) and actor creation.
void measure_actor_calls(bench_session& s, local_rig& rig);

/// Tasks (sync, async, several clients), waiting on 1,000 references, the fan-in DAG.
void measure_tasks(bench_session& s, local_rig& rig);

/// Small puts and gets, 100 MB puts and gets, an object holding 10,000 references.
void measure_objects(bench_session& s, local_rig& rig);

/// Spilling a store's objects to disk and reading them back, beside a plain file's
/// write and read of the same bytes in the same folder.
void measure_spilling(bench_session& s);

/// GPU hand-offs and dispatch beside bare CUDA (bench_gpu.cpp); skipped without a GPU.
void measure_gpu(bench_session& s);

/// Actor-call latency by message size beside bare CAF requests of the same size.
void measure_local_latency(bench_session& s, local_rig& rig);

} // namespace swarm::tools
