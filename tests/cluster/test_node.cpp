// A node process for the multi-node tests: `swarm_test_node --config FILE --node NAME`.

#include <cstdio>
#include <string>

#include "tests/cluster/test_app.hpp"

int main(int argc, char** argv) {
  std::string config, node;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--config") config = argv[i + 1];
    if (flag == "--node") node = argv[i + 1];
  }
  if (config.empty() || node.empty()) {
    std::fprintf(stderr, "usage: swarm_test_node --config FILE --node NAME\n");
    return 2;
  }
  auto cfg = swarm::load_cluster_config(config);
  if (!cfg) {
    std::fprintf(stderr, "swarm: %s\n", cfg.err().message.c_str());
    return 1;
  }
  swarm::application app;
  swarm::cluster_test::register_all(app);
  return swarm::serve(app, *cfg, node);
}
