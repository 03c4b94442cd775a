#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "base/node_log.hpp"

namespace swarm {

/// Bounds a node process's stop: made when the stop starts and destroyed when it is done.
/// If it is not done within `deadline`, the watchdog logs the step the stop hangs in (as
/// the node reports it in `step`) and ends the process with exit code 2.
class stop_watchdog {
public:
  stop_watchdog(node_log log, std::chrono::milliseconds deadline,
                std::shared_ptr<std::atomic<const char*>> step);
  ~stop_watchdog();

  stop_watchdog(const stop_watchdog&) = delete;
  stop_watchdog& operator=(const stop_watchdog&) = delete;

private:
  // Only the stopping thread and the watchdog's own share these: a one-shot signal.
  std::mutex mtx_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

} // namespace swarm
