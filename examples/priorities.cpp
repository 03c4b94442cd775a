// Priorities: on a node with one CPU busy with a batch of low-priority work, a
// high-priority task runs next, ahead of the batch's tasks that have not started.
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "framework/swarm.hpp"

using namespace std::chrono_literals;

int main() {
  swarm::application app;
  // Works 20 ms and returns when it finished (steady clock, microseconds).
  auto work = app.function("work", [] {
    std::this_thread::sleep_for(20ms);
    return static_cast<long>(std::chrono::duration_cast<std::chrono::microseconds>(
                                 std::chrono::steady_clock::now().time_since_epoch())
                                 .count());
  });
  swarm::runtime_config cfg;
  cfg.cpus = 1;
  swarm::runtime rt{app, cfg};

  swarm::task_options batch; // priority 0
  std::vector<swarm::object_ref<long>> low;
  for (int i = 0; i < 20; ++i)
    low.push_back(rt.submit(batch, work));
  swarm::task_options urgent;
  urgent.priority = 10;
  auto high = rt.submit(urgent, work);

  long high_done = high.get(30s).value();
  int after = 0; // batch tasks that finished after the urgent one
  for (auto& r : low)
    after += r.get(30s).value() > high_done ? 1 : 0;
  std::printf(
      "the urgent task finished ahead of %d of the 20 batch tasks queued before it\n",
      after);
  return after >= 15 ? 0 : 1;
}
