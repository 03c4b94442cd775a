// A local cluster of three node processes on 127.0.0.1, started by the runtime itself:
// tasks go to chosen nodes, a future made on one node is the argument of a task on
// another, and an actor lives where a custom resource is.
#include <cstdio>
#include <string>

#include "framework/swarm.hpp"

struct tally : swarm::actor {
  long n = 0;
  long add(long k) { return n += k; }
};

std::string where(swarm::context& ctx) {
  return ctx.node_name();
}

long twice(long x) {
  return 2 * x;
}

int main() {
  swarm::application app; // registered before the workers are forked: they share it
  auto where_fn = app.function("where", where);
  auto twice_fn = app.function("twice", twice);
  auto tally_t = app.actor_type<tally>("tally").method("add", &tally::add);

  swarm::local_cluster_config lc;
  lc.nodes = 3; // this process is the head; worker-1 and worker-2 are forked
  lc.cpus_per_node = 1;
  lc.worker_resources.set("accelerator", 1);
  swarm::runtime rt{app, lc}; // returns once all three nodes joined

  int bad = 0;
  for (std::string node : {"head", "worker-1", "worker-2"}) {
    swarm::task_options on;
    on.node = node;
    auto ran_on = rt.submit(on, where_fn).get().value();
    std::printf("a task sent to %-8s ran on %s\n", node.c_str(), ran_on.c_str());
    bad += ran_on != node;
  }

  swarm::task_options on_w1, on_w2;
  on_w1.node = "worker-1";
  on_w2.node = "worker-2";
  auto a = rt.submit(on_w1, twice_fn, 10L);       // made on worker-1
  auto b = rt.submit(on_w2, twice_fn, a).get();   // read on worker-2
  std::printf("twice(twice(10)) across two nodes = %ld\n", b.value());
  bad += b.value() != 40;

  swarm::actor_options needs;
  needs.resources.set("accelerator", 1); // only workers have it: placed by the head
  auto t = rt.spawn(needs, tally_t);
  t.call(&tally::add, 5L);
  auto total = t.call(&tally::add, 6L).get().value();
  std::printf("the tally on a worker holds %ld\n", total);
  bad += total != 11;
  return bad == 0 ? 0 : 1;
} // the runtime stops the worker processes here
