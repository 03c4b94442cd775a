#pragma once

// The `node --config FILE --node NAME` mode of a check binary that starts its own worker
// node processes (the chaos and soak checks): the worker dies with its parent.

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "framework/swarm.hpp"

namespace swarm::cluster_test {

/// Serves node `--node` of `--config` with what `register_app` registers; `args` are the
/// arguments after "node", `program` names the binary in the usage line.
inline int serve_child_node(const std::vector<std::string>& args, const char* program,
                            const std::function<void(application&)>& register_app) {
  auto parent = ::getppid();
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) return 1;
  std::string config, node;
  for (size_t i = 0; i + 1 < args.size(); i += 2) {
    if (args[i] == "--config") config = args[i + 1];
    if (args[i] == "--node") node = args[i + 1];
  }
  auto cfg = load_cluster_config(config);
  if (!cfg || node.empty()) {
    std::fprintf(stderr, "usage: %s node --config FILE --node NAME%s%s\n", program,
                 cfg ? "" : ": ", cfg ? "" : cfg.err().message.c_str());
    return 2;
  }
  application app;
  register_app(app);
  return serve(app, *cfg, node);
}

} // namespace swarm::cluster_test
