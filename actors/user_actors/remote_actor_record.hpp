#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "framework/detail/actor_record.hpp"
#include "framework/detail/task_spec.hpp"
#include "transport/wire_message.hpp"

namespace swarm::actors {

/// An actor on another node, as this node's handles see it. The node that created it
/// (its owner) keeps what re-creates it, and restarts it elsewhere when its node dies;
/// calls made meanwhile wait for the restart. A handle found by name on another node
/// follows: when the actor's node dies, its calls wait while it looks the name up again
/// until the owner's restart shows, then go there. When the owner's last handle goes
/// (the record with it), `release` stops the actor where it lives.
class remote_actor_record final : public detail::actor_record {
public:
  using release_fn = std::function<void(const std::string& node, uint64_t id)>;

  remote_actor_record(detail::actor_spec spec, std::string node, uint64_t id,
                      std::optional<wire_msg::actor_create> created_by = std::nullopt,
                      release_fn release = {})
      : actor_record(std::move(spec)), node_(std::move(node)), id_(id),
        create_(std::move(created_by)), release_(std::move(release)) {}

  ~remote_actor_record() override {
    if (release_ && !dead()) release_(node_, id_);
  }

  std::string remote_node() const override {
    std::lock_guard<std::mutex> guard{mtx_};
    return node_;
  }

  uint64_t id() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return id_;
  }

  /// Whether the actor lives, or lived before a restart, on `node` as `id`.
  bool was_at(const std::string& node, uint64_t id) const {
    std::lock_guard<std::mutex> guard{mtx_};
    return (node_ == node && id_ == id) ||
           std::find(former_.begin(), former_.end(), std::make_pair(node, id)) !=
               former_.end();
  }

  /// Whether this node created it (and so restarts it).
  bool owned() const noexcept { return create_.has_value(); }

  /// Why an answer from the instance on `node` does not count: its owner restarted
  /// the actor without the state with the call's effect. The call runs again where the
  /// actor is now, as one that never reached it.
  error refused_answer(const std::string& node) const {
    return {errc::node_unreachable,
            label() + " answered from node '" + node +
                "', but had been restarted elsewhere without that call's effect"};
  }

  /// "actor 'NAME'", or "actor of type 'TYPE'" for one without a name: for messages.
  std::string label() const {
    auto& name = spec().options.name;
    return name.empty() ? "actor of type '" + spec().type_name + "'"
                        : "actor '" + name + "'";
  }

  /// The request that creates it again, carrying the latest saved state: no later one
  /// is kept until the restart ends.
  wire_msg::actor_create recreate() {
    auto m = *create_;
    std::lock_guard<std::mutex> guard{mtx_};
    m.checkpoint = checkpoint();
    state_taken_ = true;
    taken_ = {node_, id_, state_seq_};
    return m;
  }

  /// Marks it as moving when it lives on `from` as `id`, this node created it and it may
  /// restart at all (`max_restarts` > 0): `from` stops. Whether it did.
  bool mark_moving(const std::string& from, uint64_t id) {
    std::lock_guard<std::mutex> guard{mtx_};
    if (!create_ || node_ != from || id_ != id || spec().options.max_restarts == 0)
      return false;
    moving_from_ = from;
    return true;
  }

  /// What `recover` began for an actor lost with its node.
  enum class recovery {
    moving,     ///< a move off a node that stopped: it uses none of `max_restarts`
    restarting, ///< a restart by this node, its creator
    following,  ///< a follow to where its owner restarts it (another node's actor)
    under_way,  ///< nothing: a restart or follow began already (or its caller's thread)
    elsewhere,  ///< nothing: it no longer lives where it was lost (a restart ended)
    none,       ///< nothing can bring it back: restarts used up, or nothing to follow
  };

  /// Begins bringing back the actor lost as `id` (0: whichever instance) with `node`. One
  /// decision under one lock, so that a restart or follow another thread began or ended
  /// meanwhile is never taken for "none can begin". Calls wait from then until
  /// `relocate` (or `abandon`). A restart sets `used` to the restarts used before it.
  recovery recover(const std::string& node, uint64_t id, uint32_t* used = nullptr) {
    std::lock_guard<std::mutex> guard{mtx_};
    if (restarting_) return recovery::under_way;
    if (node_ != node || (id != 0 && id_ != id)) return recovery::elsewhere;
    if (!moving_from_.empty() && moving_from_ == node_) {
      moving_from_.clear();
      restarting_ = true;
      return recovery::moving;
    }
    if (create_) {
      if (restarts_ >= spec().options.max_restarts) return recovery::none;
      if (used) *used = restarts_;
      ++restarts_;
      restarting_ = true;
      return recovery::restarting;
    }
    if (spec().options.name.empty() && spec().owner_node.empty()) return recovery::none;
    restarting_ = true;
    return recovery::following;
  }

  /// Begins following an actor this node did not create, lost with its node, by its
  /// name or through its owner: calls wait until `relocate` (a lookup found it
  /// restarted) or `abandon`. False when it is this node's, has neither a name nor a
  /// known owner, or is already restarting.
  bool begin_follow() {
    std::lock_guard<std::mutex> guard{mtx_};
    if (create_ || restarting_ ||
        (spec().options.name.empty() && spec().owner_node.empty()))
      return false;
    restarting_ = true;
    return true;
  }

  bool restarting() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return restarting_;
  }

  /// Keeps `call` for the restarted actor (`first`: ahead of those kept already); false
  /// when no restart is under way.
  bool hold(detail::task_ptr call, bool first = false) {
    std::lock_guard<std::mutex> guard{mtx_};
    if (!restarting_) return false;
    if (first)
      held_.insert(held_.begin() + static_cast<std::ptrdiff_t>(first_held_++),
                   std::move(call));
    else
      held_.push_back(std::move(call));
    return true;
  }

  /// Queues `call` to be sent once its argument futures are ready, after those queued
  /// before it; true when the caller should `next_ready` (no one else sends).
  bool enqueue(detail::task_ptr call) {
    std::lock_guard<std::mutex> guard{mtx_};
    outbox_.push_back(std::move(call));
    return !std::exchange(sending_, true);
  }

  /// Takes the next queued call whose arguments are ready. Null when none is: sending
  /// stops, and `blocked` is the future the first waiting call needs (null when the
  /// queue is empty); whoever sees it ready calls `resume`, then `next_ready`.
  detail::task_ptr next_ready(detail::slot_ptr& blocked) {
    std::lock_guard<std::mutex> guard{mtx_};
    blocked = nullptr;
    if (!outbox_.empty())
      for (auto& a : outbox_.front()->args)
        if (a.ref && !a.ref->done()) {
          blocked = a.ref;
          break;
        }
    if (outbox_.empty() || blocked) {
      sending_ = false;
      return nullptr;
    }
    auto c = std::move(outbox_.front());
    outbox_.pop_front();
    return c;
  }

  /// Takes up sending again; false when someone else already sends.
  bool resume() {
    std::lock_guard<std::mutex> guard{mtx_};
    return !std::exchange(sending_, true);
  }

  /// The restarted actor lives on `node` as `id`; returns the calls kept for it.
  std::deque<detail::task_ptr> relocate(std::string node, uint64_t id) {
    std::lock_guard<std::mutex> guard{mtx_};
    if (node_ != node || id_ != id) former_.emplace_back(node_, id_);
    node_ = std::move(node);
    id_ = id;
    state_seq_ = 0; // the new instance numbers its states afresh
    return end_restart();
  }

  /// Keeps `state`, numbered `seq` by the instance that is `id` on `node`, for the
  /// restart: false (refused) when that instance is not the actor's now, or a restart
  /// took the state kept already, unless the state the last restart took was that
  /// instance's and no older (the restarted actor has its effect). A state older than
  /// the one kept (sent again, or overtaken) is not kept, and counts as kept: a newer
  /// one holds its effect.
  bool keep_state(const std::string& node, uint64_t id, uint64_t seq,
                  std::vector<uint8_t> state) {
    std::lock_guard<std::mutex> guard{mtx_};
    if (node_ == node && id_ == id && !state_taken_) {
      if (seq == 0 || seq > state_seq_) {
        state_seq_ = seq;
        save_checkpoint(std::move(state));
      }
      return true;
    }
    return seq != 0 && seq <= taken_.seq && taken_.node == node && taken_.id == id;
  }

  /// The restart failed; returns the calls kept for it (the actor is dead).
  std::deque<detail::task_ptr> abandon(std::string why) {
    mark_dead(std::move(why));
    std::lock_guard<std::mutex> guard{mtx_};
    return end_restart();
  }

private:
  std::deque<detail::task_ptr> end_restart() {
    restarting_ = false;
    state_taken_ = false;
    first_held_ = 0;
    return std::exchange(held_, {});
  }

  // Guards where it lives, its restart and its calls: callers' threads send without a
  // hop; the directory and the agent restart, relocate and follow it.
  mutable std::mutex mtx_;
  std::string node_;
  uint64_t id_;
  std::optional<wire_msg::actor_create> create_;
  release_fn release_;
  uint32_t restarts_ = 0;
  uint64_t state_seq_ = 0; // the number of the state kept, as its instance numbered it
  bool restarting_ = false;
  bool state_taken_ = false;
  // The instance whose state the last restart took, and that state's number.
  struct taken_state {
    std::string node;
    uint64_t id = 0;
    uint64_t seq = 0;
  } taken_;
  std::string moving_from_; // the node it lives on stops: its restart is a move
  std::deque<detail::task_ptr> held_;
  size_t first_held_ = 0;
  std::deque<detail::task_ptr> outbox_; // waiting for argument futures, in call order
  std::vector<std::pair<std::string, uint64_t>> former_; // its lives before restarts
  bool sending_ = false;
};

} // namespace swarm::actors
