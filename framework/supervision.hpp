#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace swarm {

/// When a supervisor restarts a child that exited (OTP child spec `restart`).
enum class restart_type {
  permanent, ///< always restarted
  transient, ///< restarted only when it failed
  temporary, ///< never restarted
};

/// Which children a supervisor restarts when one of them is restarted.
enum class strategy {
  one_for_one,  ///< only the child that exited
  one_for_all,  ///< every child
  rest_for_one, ///< the child that exited and every child started after it
};

/// How a child ended.
enum class exit_kind {
  normal,   ///< finished its work
  shutdown, ///< was asked to stop
  failure,  ///< anything else: crash, kill, lost node
};

/// How many restarts a supervisor may do within a period before it gives up and
/// escalates.
struct restart_intensity {
  size_t max_restarts = 3;                ///< restarts allowed within `period`
  std::chrono::milliseconds period{5000}; ///< the sliding window they count in
};

/// How a supervisor stops a child.
struct shutdown_policy {
  /// Kill at once instead of asking the child to stop.
  bool brutal_kill = false;
  /// How long a child may take to stop after it was asked before it is killed;
  /// `milliseconds::max()` waits forever (OTP `infinity`, meant for child supervisors).
  std::chrono::milliseconds timeout{5000};
};

/// The data part of an OTP child spec.
struct child_policy {
  std::string id;                                 ///< unique among its siblings
  restart_type restart = restart_type::permanent; ///< which exits restart it
  shutdown_policy shutdown;                       ///< how it is stopped
};

/// Restart intensity bookkeeping: records the time points of restarts and answers whether
/// one more is allowed. Time is injected; nothing here reads a clock.
class restart_window {
public:
  using time_point = std::chrono::steady_clock::time_point; ///< an injected time

  /// An empty window of `limits`.
  explicit restart_window(restart_intensity limits);

  /// Records a restart at `now` and returns true, or returns false (recording nothing)
  /// when it would make more than `max_restarts` restarts within `period`.
  /// Restarts at least `period` older than `now` no longer count.
  bool allow(time_point now);

  /// Returns how many restarts counted at the last call to `allow`.
  size_t count() const { return restarts_.size(); }

  /// The intensity it enforces.
  const restart_intensity& limits() const { return limits_; }

private:
  void expire(time_point now);

  restart_intensity limits_;
  std::deque<time_point> restarts_; // oldest first
};

/// What a supervisor must do after a child exit.
struct supervisor_decision {
  /// Nothing to do, restart some children, or give up and escalate.
  enum class action { none, restart, escalate };
  action what = action::none; ///< what to do
  /// Indices to stop, in the order to stop them (reverse start order), excluding the
  /// child that exited.
  std::vector<size_t> stop;
  /// Indices to (re)start, in start order (includes the exited child when it restarts).
  std::vector<size_t> start;
  /// Children dropped for good: temporary children that exited or were stopped by a group
  /// restart, transient children that did not fail.
  std::vector<size_t> remove;
};

/// The deterministic decision core of a supervisor: strategy, intensity and child
/// policies. It assumes the owner carries out every decision it returns, so after a
/// decision every child in `start` counts as running and every child in `stop`,
/// `remove` or (on escalation) all children as stopped.
class supervisor_logic {
public:
  using time_point = std::chrono::steady_clock::time_point; ///< an injected time

  /// All children count as running (started in the given order).
  /// @throws std::invalid_argument when two children share an id.
  supervisor_logic(strategy how, restart_intensity limits,
                   std::vector<child_policy> children);

  /// Decides what to do after child `index` exited. Exits of children that do not count
  /// as running (already stopped, removed, or after an escalation) are ignored.
  supervisor_decision on_child_exit(size_t index, exit_kind how, time_point now);

  /// Returns the running children in the order to stop them (reverse start order) and
  /// marks them all stopped; for an orderly shutdown of the whole supervisor.
  std::vector<size_t> shutdown();

  // -- observers --------------------------------------------------------------

  /// How many children it has (removed ones included).
  size_t size() const { return children_.size(); }
  /// Child `index`'s policy.
  const child_policy& child(size_t index) const { return children_.at(index).policy; }
  /// Whether child `index` counts as running.
  bool running(size_t index) const {
    return children_.at(index).state == status::running;
  }
  /// Whether child `index` was dropped for good.
  bool removed(size_t index) const {
    return children_.at(index).state == status::removed;
  }
  /// Returns true once a decision escalated or `shutdown` was called.
  bool terminated() const { return terminated_; }
  /// The index of the child `id`; empty when there is none.
  std::optional<size_t> index_of(const std::string& id) const;
  /// Its strategy.
  strategy how() const { return how_; }
  /// Its restarts so far, within the intensity's period.
  const restart_window& window() const { return window_; }

private:
  enum class status { running, stopped, removed };

  struct entry {
    child_policy policy;
    status state;
  };

  static bool restarts(restart_type type, exit_kind how);

  // Fills `stop`, `start` and `remove` of a restart of `failed` that affects the
  // children in [first, size()).
  void plan_restart(size_t failed, size_t first, supervisor_decision& out);

  strategy how_;
  restart_window window_;
  std::vector<entry> children_;
  bool terminated_ = false;
};

/// The name of `x`, as in OTP ("one_for_one").
const char* to_string(strategy x);
/// The name of `x` ("permanent", "transient", "temporary").
const char* to_string(restart_type x);
/// The name of `x`.
const char* to_string(exit_kind x);

} // namespace swarm
