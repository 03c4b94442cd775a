#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "framework/detail/object_slot.hpp"

namespace swarm {

/// How a stage of several replicas picks the one an item goes to.
enum class stage_routing : uint8_t {
  least_loaded, ///< the replica with the fewest items in flight (ties: round robin)
  round_robin,  ///< each replica in turn
};

} // namespace swarm

namespace swarm::detail {

/// One replica of a stage: calls its method on `input` (a future, resolved where the
/// replica runs) and returns the output's slot at once.
using stage_call = std::function<slot_ptr(const slot_ptr& input)>;

/// One replica of a stage: its call, and whether its actor still lives (a replica that
/// died for good gets no more items while another lives).
struct stage_replica {
  stage_call call;
  std::function<bool()> alive;
};

/// A stage as the engine runs it.
struct stage_plan {
  std::string name;
  std::vector<stage_replica> replicas;
  stage_routing routing = stage_routing::least_loaded;
  /// Times an item whose call failed (its replica crashed and restarted, its node died)
  /// is sent to the stage again before the item fails.
  uint32_t max_redeliveries = 3;
  /// A side branch: it gets the output of the main stage before it, and its own output
  /// goes nowhere (a tee, or a sink beside the main path).
  bool side = false;
};

/// What one pushed item came to: the last main stage's output, or the first call that
/// failed past its redeliveries.
struct pipeline_outcome {
  slot_ptr slot;
  /// Which stage failed (empty when it did not), and after how many deliveries.
  std::string failed_stage;
  uint32_t deliveries = 0;
};

/// Counts of a running pipeline, for tests and monitoring.
struct pipeline_counts {
  uint64_t pushed = 0;
  uint64_t taken = 0;
  uint64_t redeliveries = 0;
  /// Items admitted and not taken yet (the window holds at most `window` of them).
  uint64_t in_flight = 0;
};

/// Runs items through stages of actors. Each item enters when fewer than `window`
/// items are in flight (admitted and not yet taken by `next`), so a slow stage, or a
/// slow reader, slows whoever pushes, and memory stays bounded by the window. A stage's
/// output is handed to the next stage as a future: the value moves from replica to
/// replica, not through here. A call that fails is sent again (at least once delivery);
/// outputs come out in the order items went in. Thread-safe: a bounded channel, shared
/// by the pushing thread, the reading thread and the threads that complete calls.
class pipeline_engine : public std::enable_shared_from_this<pipeline_engine> {
public:
  pipeline_engine(std::vector<stage_plan> stages, size_t window);

  /// Waits up to `timeout` for room, then makes the item with `make` and starts it.
  result<void> push(const std::function<slot_ptr()>& make,
                    std::chrono::milliseconds timeout);

  /// No more items come: `next` says so once the last one was taken.
  void close();

  /// Waits up to `timeout` for the next item's outcome, in push order; nullopt when
  /// closed and every item was taken.
  result<std::optional<pipeline_outcome>> next(std::chrono::milliseconds timeout);

  pipeline_counts counts() const;

private:
  struct item {
    std::optional<pipeline_outcome> outcome;
    uint32_t open_sides = 0; // side calls not done yet
    bool settled = false;    // its outcome is final: `next` may take it
  };

  void start(uint64_t seq, size_t stage, slot_ptr input, uint32_t attempt,
             size_t avoid = static_cast<size_t>(-1));
  void finished(uint64_t seq, size_t stage, size_t replica, const slot_ptr& input,
                const slot_ptr& out, uint32_t attempt);
  // Picks a replica of `stage` (another than `avoid` when one lives) and counts the item
  // there; with the lock held.
  size_t pick(size_t stage, size_t avoid);
  // The main stage after `stage`, or the stage count when none is left.
  size_t next_main(size_t stage) const;
  // Records what `seq` came to if nothing of it is still out; with the lock held.
  void settle(uint64_t seq);

  std::vector<stage_plan> stages_;
  const size_t window_;
  // Guards the window, loads and items (with room_, ready_): pushing and reading threads
  // block; threads completing calls route, redeliver and settle under it.
  mutable std::mutex mtx_;
  std::condition_variable room_;
  std::condition_variable ready_;
  std::vector<std::vector<uint32_t>> loads_; // items in flight per stage and replica
  std::vector<size_t> cursor_;
  std::map<uint64_t, item> items_;
  uint64_t next_seq_ = 0;
  uint64_t next_out_ = 0;
  bool closed_ = false;
  pipeline_counts counts_;
};

} // namespace swarm::detail
