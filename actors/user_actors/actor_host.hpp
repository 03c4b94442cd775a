#pragma once

#include <caf/actor.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/fwd.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "actors/user_actors/call_histogram.hpp"
#include "framework/detail/actor_record.hpp"
#include "framework/detail/task_spec.hpp"

namespace swarm::detail {
class core;
} // namespace swarm::detail

namespace swarm::actors {

/// An actor call that ended, for the timeline.
struct call_event {
  object_id id;       ///< its result object
  std::string method; ///< its registered name; empty for a call made on this node
  bool failed = false;
  int64_t started_us = 0; ///< wall clock, microseconds since the epoch
  int64_t ended_us = 0;
};

/// How many of its last calls each actor host keeps for the timeline.
inline constexpr size_t calls_kept = 128;

/// Whether the node that hosts actors still runs; records outlive nodes when users keep
/// handles, and must not touch a stopped node.
struct node_liveness {
  // Guards alive: records outlive the node and go on any thread; stop() clears it
  // under the lock, so no record's destructor sends into a stopped actor system.
  std::mutex mtx;
  bool alive = true;
};

/// A live actor as the node sees it: the record of its handles plus the CAF actor that
/// hosts it. While the supervisor of a supervised actor decides on a restart, calls wait
/// here, in order, and go to the successor (or fail when there will be none).
class host_record final : public detail::actor_record {
public:
  /// A `supervised` actor is restarted by a supervision tree, not by its own policy.
  host_record(detail::actor_spec spec, std::shared_ptr<node_liveness> node,
              bool supervised = false);
  ~host_record() override;

  /// The hosting CAF actor; invalid once the node stopped.
  caf::actor host() const;

  /// The actor's (new) host: calls held for it go there first, in order.
  void set_host(caf::actor a);

  /// Sends `call` to the host, or holds it while a restart is pending; false when there
  /// is neither (the actor stopped for good, or its node did).
  bool deliver(detail::task_ptr& call);

  /// The supervised host `old` ends after `cause`, and its supervisor decides what
  /// follows: until `set_host` or `give_up`, calls are held. Nothing changes when `old`
  /// is no longer the host (a successor was already set).
  void begin_restart(const caf::actor_addr& old, std::string cause);

  /// Holds calls that reached the ending host but did not run, ahead of those held
  /// since, in the order given.
  void hold_unrun(std::deque<detail::task_ptr> calls);

  /// Why the host before the next one ended (empty for a first start); cleared.
  std::string take_restart_cause();

  /// Its supervisor will not start it again: the actor is dead and held calls fail.
  void give_up(const std::string& why);

  /// Waits until a host is set (a supervisor starts its children asynchronously).
  bool wait_for_host(std::chrono::steady_clock::time_point deadline) const;

  /// Drops the CAF handle; the node calls this while it stops.
  void detach();

  bool supervised() const noexcept { return supervised_; }

  /// Its owner restarted it on another node (this node was found dead, and stopped it):
  /// calls through its handles here go to a record that follows it there by name.
  void mark_moved() noexcept { moved_.store(true, std::memory_order_release); }
  bool moved() const noexcept override { return moved_.load(std::memory_order_acquire); }
  /// The id its owner on another node knows it by here (0: none), by which that owner
  /// says where it lives once it moved.
  void set_owner_id(uint64_t id) noexcept {
    owner_id_.store(id, std::memory_order_release);
  }
  uint64_t owner_id() const noexcept { return owner_id_.load(std::memory_order_acquire); }
  /// The record calls go to since it moved; null until `set_forward`.
  detail::actor_record_ptr forward() const;
  /// Sets the record calls go to since it moved, unless one is set; returns the one set.
  detail::actor_record_ptr set_forward(detail::actor_record_ptr to);

  /// How long its calls took to run, across restarts.
  const std::shared_ptr<call_histogram>& timing() const noexcept { return timing_; }

private:
  std::shared_ptr<call_histogram> timing_ = std::make_shared<call_histogram>();
  std::shared_ptr<node_liveness> node_;
  const bool supervised_;
  // Shared on purpose: callers' threads send straight to the host (no hop) while the
  // supervisor and the host swap it and hold calls over a restart, in order.
  mutable std::mutex mtx_;
  mutable std::condition_variable host_set_;
  caf::actor host_;
  bool restarting_ = false;
  std::string restart_cause_;
  std::deque<detail::task_ptr> held_;
  size_t unrun_ = 0; // how many of held_'s first calls came from the ended host
  std::atomic<bool> moved_{false};
  std::atomic<uint64_t> owner_id_{0};
  detail::actor_record_ptr forward_; // under mtx_
};

/// Spawns the CAF actor hosting a user actor: it constructs the instance, runs calls one
/// at a time in arrival order (a call whose argument futures are pending holds back those
/// behind it), restarts a crashed instance while `max_restarts` allows, and fails calls
/// with `actor_died` once it cannot. A supervised actor's host instead exits with the
/// crash as its reason, for its supervisor to decide; its successor gets `restart_cause`
/// (empty for a first start) passed to `on_restart`.
/// An actor demanding GPUs first asks `scheduler` (the node's local scheduler) for them
/// and holds them for its life: its instance is made, and calls run, once they are free;
/// its context reads them (`gpu_ids()`), and a call's work on them is waited for as a
/// task's.
/// `(stats_atom, timeline_atom) -> std::vector<call_event>`: its last `calls_kept` calls
/// that ended, oldest first.
caf::actor spawn_actor_host(caf::actor_system& sys, detail::core& node,
                            const std::shared_ptr<host_record>& record,
                            std::string restart_cause = {}, caf::actor scheduler = {});

} // namespace swarm::actors

// Only sent within a node.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<swarm::actors::call_event>)
