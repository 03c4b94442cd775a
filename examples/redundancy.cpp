// Redundant tasks: one task run on two nodes at once; the first result wins, and when
// the node of one copy dies the other's result comes, with no retry and no delay.
// Three node processes on 127.0.0.1 (this one is the head).
#include <unistd.h>

#include <cstdio>
#include <string>

#include "framework/swarm.hpp"

// Dies on worker-1 (a machine failing mid-task); answers from anywhere else.
std::string answer(swarm::context& ctx) {
  if (ctx.node_name() == "worker-1") _exit(9);
  return "answered by " + ctx.node_name();
}

int main() {
  swarm::application app; // registered before the workers are forked: they share it
  auto answer_fn = app.function("answer", answer);
  swarm::local_cluster_config lc;
  lc.nodes = 3;
  lc.cpus_per_node = 1;
  lc.worker_resources.set("worker", 1); // only the two workers can run it
  swarm::runtime rt{app, lc};

  swarm::task_options twice;
  twice.resources.set("worker", 1);
  twice.redundancy = 2; // on both workers at once
  twice.max_retries = 0; // no retry: the second copy is what saves it
  auto r = rt.submit(twice, answer_fn).get();
  std::printf("with redundancy 2: %s\n", r ? r->c_str() : r.err().to_string().c_str());
  return r && *r == "answered by worker-2" ? 0 : 1;
}
