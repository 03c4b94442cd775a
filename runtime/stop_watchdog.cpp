#include "runtime/stop_watchdog.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace swarm {

stop_watchdog::stop_watchdog(node_log log, std::chrono::milliseconds deadline,
                             std::shared_ptr<std::atomic<const char*>> step) {
  thread_ = std::thread{[this, log = std::move(log), deadline, step = std::move(step)] {
    std::unique_lock<std::mutex> guard{mtx_};
    if (cv_.wait_for(guard, deadline, [this] { return done_; })) return;
    log.error("the stop did not finish within " + std::to_string(deadline.count()) +
              " ms (cluster.stop_timeout_ms); it hangs " + step->load() +
              ": exiting anyway");
    std::fflush(nullptr);
    std::_Exit(2);
  }};
}

stop_watchdog::~stop_watchdog() {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    done_ = true;
  }
  cv_.notify_one();
  thread_.join();
}

} // namespace swarm
