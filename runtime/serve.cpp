#include <csignal>
#include <cstdio>

#include "actors/cluster_node.hpp"
#include "framework/cluster.hpp"

namespace swarm {

int serve(const application& app, const cluster_config& cfg, const std::string& node) {
  // SIGINT and SIGTERM stop the node cleanly: blocked here (threads inherit the mask)
  // and taken synchronously below.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  try {
    actors::cluster_node n{app, cfg, node};
    std::fprintf(stderr, "[swarm %s] serving on %s:%u (cluster '%s')\n", node.c_str(),
                 (*cfg.find(node))->address.c_str(), (*cfg.find(node))->port,
                 cfg.name.c_str());
    timespec poll_every{0, 100'000'000};
    while (!n.wait_for_stop(std::chrono::milliseconds(0))) {
      if (sigtimedwait(&stop_signals, nullptr, &poll_every) > 0) break;
    }
    if (auto why = n.stop_reason(); !why.empty()) {
      std::fprintf(stderr, "[swarm %s] the head refused this node: %s\n", node.c_str(),
                   why.c_str());
      return 1;
    }
    std::fprintf(stderr, "[swarm %s] stopping\n", node.c_str());
    return 0;
  } catch (const failure& f) {
    std::fprintf(stderr, "swarm: %s\n", f.err().to_string().c_str());
    return 1;
  }
}

} // namespace swarm
