#include <algorithm>
#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include "actors/cluster_node.hpp"
#include "framework/cluster.hpp"

namespace swarm {

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (auto& n : names)
    out += (out.empty() ? "" : ", ") + n;
  return out;
}

// The nodes of `cfg` not in `alive`.
std::vector<std::string> absent(const cluster_config& cfg,
                                const std::vector<std::string>& alive) {
  std::vector<std::string> out;
  for (auto& spec : cfg.nodes)
    if (std::find(alive.begin(), alive.end(), spec.name) == alive.end())
      out.push_back(spec.name);
  return out;
}

} // namespace

int serve(const application& app, const cluster_config& cfg, const std::string& node,
          const serve_options& opts) {
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
    auto wait_until = std::chrono::steady_clock::now() + opts.wait_timeout;
    bool waiting = opts.wait_nodes > 0;
    timespec poll_every{0, 100'000'000};
    while (!n.wait_for_stop(std::chrono::milliseconds(0))) {
      if (waiting) {
        auto alive = n.alive_nodes();
        if (alive.size() >= opts.wait_nodes) {
          std::printf("[swarm %s] ready: %zu node(s) alive (%s)\n", node.c_str(),
                      alive.size(), joined(alive).c_str());
          std::fflush(stdout);
          waiting = false;
        } else if (std::chrono::steady_clock::now() >= wait_until) {
          std::fprintf(stderr,
                       "[swarm %s] stopping: %zu of the %zu node(s) waited for are alive "
                       "after %lld ms (not alive: %s)\n",
                       node.c_str(), alive.size(), opts.wait_nodes,
                       static_cast<long long>(opts.wait_timeout.count()),
                       joined(absent(cfg, alive)).c_str());
          return 1;
        }
      }
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
