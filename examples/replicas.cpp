// Replicated objects: a result kept on two nodes outlives the node that made it,
// without running again. Three node processes on 127.0.0.1 (this one is the head).
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "framework/swarm.hpp"

// A report made on whichever node runs it.
std::string report(swarm::context& ctx) {
  return "made on " + ctx.node_name();
}

// Ends its node process at once, as a machine that fails.
int crash() {
  _exit(9);
}

int main() {
  swarm::application app; // registered before the workers are forked: they share it
  auto report_fn = app.function("report", report);
  auto crash_fn = app.function("crash", crash);
  swarm::local_cluster_config lc;
  lc.nodes = 3;
  lc.cpus_per_node = 1;
  swarm::runtime rt{app, lc};

  swarm::task_options kept;
  kept.node = "worker-1";
  kept.replicas = 2; // worker-1 copies it to another node before this one hears of it
  auto ref = rt.submit(kept, report_fn);
  // Ready (and copied), not read: a read would keep a copy here too.
  if (rt.wait(std::vector{ref}, 1, std::chrono::seconds(30)).ready.empty()) return 1;

  swarm::task_options on_w1;
  on_w1.node = "worker-1";
  on_w1.max_retries = 0;
  auto gone = rt.submit(on_w1, crash_fn).get(); // worker-1 dies with it
  std::printf("worker-1 crashed: %s\n", gone ? "no" : gone.err().to_string().c_str());

  // Read from the copy: the task, pinned to the lost node, could not run again.
  auto r = ref.get();
  std::printf("the replicated result: %s\n", r ? r->c_str() : r.err().to_string().c_str());
  return r && *r == "made on worker-1" && !gone ? 0 : 1;
}
