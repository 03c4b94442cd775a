#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/node/cluster_node.hpp"
#include "framework/detail/device_memory.hpp"
#include "framework/cluster.hpp"
#include "runtime/stop_watchdog.hpp"

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
    // Every way out below, a throw included, stops the node within
    // cluster.stop_timeout_ms, or the process ends anyway: `arm` (destroyed first) starts
    // the watchdog, which goes after the node.
    auto step = std::make_shared<std::atomic<const char*>>("before its first step");
    std::optional<stop_watchdog> watchdog;
    actors::cluster_node n{app, cfg, node};
    n.report_stop_steps(step);
    struct arm_on_exit {
      std::function<void()> arm;
      ~arm_on_exit() {
        try {
          arm();
        } catch (...) { // no thread for a watchdog: the stop goes on unbounded
        }
      }
    } arm{[&] {
      watchdog.emplace(node_log{node, cfg.verbosity}, cfg.stop_timeout, step);
    }};
    auto& log = n.log();
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
          log.error("stopping: " + std::to_string(alive.size()) + " of the " +
                    std::to_string(opts.wait_nodes) +
                    " node(s) waited for are alive after " +
                    std::to_string(opts.wait_timeout.count()) +
                    " ms (not alive: " + joined(absent(cfg, alive)) + ")");
          return 1;
        }
      }
      if (sigtimedwait(&stop_signals, nullptr, &poll_every) > 0) break;
      if (auto devices = n.devices())
        if (auto lost = devices->lost(); !lost.empty()) {
          log.error("stopping with exit code " + std::to_string(exit_gpu_lost) +
                    ", to be started again with a fresh CUDA context: " + lost);
          return exit_gpu_lost;
        }
    }
    if (auto why = n.stop_reason(); !why.empty()) {
      log.error("the head refused this node: " + why);
      return 1;
    }
    log.info("stopping");
    return 0;
  } catch (const failure& f) {
    node_log{node, cfg.verbosity}.error(f.err().to_string());
    return 1;
  }
}

} // namespace swarm
