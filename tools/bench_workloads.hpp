#pragma once

// What `swarm bench` runs on a node: its task functions and its actor, registered under
// names every node the CLI starts knows.

#include <cstdint>
#include <string>
#include <vector>

#include "framework/actor.hpp"
#include "framework/application.hpp"
#include "framework/device_buffer.hpp"
#include "framework/object_ref.hpp"

namespace swarm::tools {

/// The actor every actor-call workload calls.
class bench_echo : public actor {
public:
  int ping(int x) { return x; }
  /// `x` as a future made at once: an async method (1_1_async_actor_calls_async).
  object_ref<int> ping_async(int x);
  /// The payload back: a message of the same size each way.
  std::vector<uint8_t> echo_bytes(const std::vector<uint8_t>& b) { return b; }
  /// A payload in, its size out (1_1_actor_calls_with_args).
  int64_t take_bytes(const std::vector<uint8_t>& b) {
    return static_cast<int64_t>(b.size());
  }
  /// As `take_bytes`, taking a millisecond: a slow sink (pipeline_slow_sink_rss_mb).
  int64_t slow_take(const std::vector<uint8_t>& b);
};

/// Handles to what `register_bench` registered.
struct bench_fns {
  task_fn<int(int)> noop;
  task_fn<int(int, int)> add;
  task_fn<int(int, int, int, int, int, int, int, int, int, int)> sum10;
  task_fn<int64_t(const std::vector<uint8_t>&)> byte_count;
  /// Resets the node's peak resident memory to what it holds now and returns that
  /// (bytes); -1 where the kernel cannot tell.
  task_fn<int64_t(int)> reset_peak_rss;
  /// The node's peak resident memory since the last reset, its argument pulled (bytes).
  task_fn<int64_t(const std::vector<uint8_t>&)> peak_rss_with;
  /// Sleeps its argument's milliseconds; returns them.
  task_fn<int(int)> nap;
  /// Its argument's bytes, each the low byte of its index.
  task_fn<std::vector<uint8_t>(int64_t)> make_bytes;
  actor_class<bench_echo> echo;
  /// Streams 0 .. n - 1.
  stream_fn<int(int)> count;
  /// (n, node, pinned): runs n `noop` tasks from the node it runs on, pinned to `node` or
  /// demanding `at_<node>` (which only that node has: the tasks are spilled there); the
  /// microseconds they took.
  task_fn<int64_t(int, std::string, bool)> fan_out;
  /// A device buffer of its argument's bytes on the task's first GPU (not written).
  task_fn<device_buffer(uint64_t)> gpu_make;
  /// `on_device(b, device)` of its first argument; the address it is at there.
  task_fn<uint64_t(device_buffer, int)> gpu_take;
};

/// A "Vm..." line of this process's /proc/self/status ("VmRSS", "VmHWM") in bytes; -1
/// when missing.
int64_t vm_bytes(const std::string& key);

/// Registers the benchmark's functions and actor (methods callable from other nodes);
/// `swarm start` registers them too, so any node the CLI starts can serve the benchmark.
bench_fns register_bench(application& app);

} // namespace swarm::tools
