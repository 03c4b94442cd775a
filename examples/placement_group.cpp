// A placement group: a gang of resource bundles reserved all at once (Ray's placement
// group), here two bundles of one CPU kept together on one node (`pack`); a task and an
// actor run in its bundles, and a group no node could ever hold is refused at once.
#include <chrono>
#include <cstdio>
#include <string>

#include "framework/swarm.hpp"

using namespace std::chrono_literals;

namespace {

class shard : public swarm::actor {
public:
  std::string where() { return actor_context().node_name(); }
};

} // namespace

int main() {
  swarm::application app;
  auto where = app.function("where", [](swarm::context& ctx) { return ctx.node_name(); });
  auto shard_t = app.actor_type<shard>("shard").method("where", &shard::where);
  swarm::runtime_config cfg;
  cfg.cpus = 4;
  swarm::runtime rt{app, cfg};

  swarm::placement_group_options opts;
  opts.bundles = {swarm::resource_set::cpus(1), swarm::resource_set::cpus(1)};
  opts.strategy = swarm::placement_strategy::pack;
  auto group = rt.create_placement_group(opts).value();
  auto nodes = group.wait(10s).value(); // the node holding each bundle
  std::printf("bundles on %s and %s\n", nodes[0].c_str(), nodes[1].c_str());

  swarm::task_options in_bundle_0;
  in_bundle_0.bundle = group.bundle(0);
  auto task_node = rt.submit(in_bundle_0, where).get(10s).value();
  swarm::actor_options in_bundle_1;
  in_bundle_1.bundle = group.bundle(1);
  auto actor_node = rt.spawn(in_bundle_1, shard_t).call(&shard::where).get(10s).value();
  std::printf("the task ran on %s, the actor lives on %s\n", task_node.c_str(),
              actor_node.c_str());

  // More than any node has: refused when it is made, naming the bundle.
  swarm::placement_group_options huge;
  huge.bundles = {swarm::resource_set::cpus(1000)};
  auto refused = rt.create_placement_group(huge);
  std::printf("a bundle of 1000 CPUs: %s\n",
              refused ? "accepted" : refused.err().to_string().c_str());

  bool removed = static_cast<bool>(rt.remove_placement_group(group));
  return task_node == nodes[0] && actor_node == nodes[1] && !refused && removed ? 0 : 1;
}
