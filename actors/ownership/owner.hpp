#pragma once

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "actors/common/inline_unit.hpp"
#include "actors/common/protocol.hpp"              // allows task_result in messages
#include "actors/control_store/control_client.hpp" // wire_msg::message as a message type
#include "actors/objects/object_manager.hpp"
#include "actors/ownership/borrow_table.hpp"
#include "actors/ownership/protocol.hpp"
#include "actors/ownership/stream_sender.hpp"
#include "actors/scheduling/protocol.hpp"
#include "base/node_log.hpp"
#include "framework/detail/task_spec.hpp"
#include "framework/supervision.hpp"
#include "transport/wire_message.hpp"

namespace swarm::actors {

class remote_actor_record;

/// A ref of another node's object was read here: its borrowed slot, and the type it
/// holds.
struct borrow_request {
  detail::slot_ptr slot;
  const detail::type_descriptor* type = nullptr;
};

/// Runs once every borrow asked for before has been answered.
struct borrow_barrier {
  std::function<void()> then;
};

/// A task or call this node sent to another node, until its result comes back.
struct pending_call {
  detail::task_ptr task;
  /// Where it was sent.
  std::string node;
  /// Its arguments held here for that node to pull; released with the result.
  std::vector<object_key> exported;
  /// The actor it calls; null for a task.
  std::shared_ptr<remote_actor_record> actor;
  /// Other nodes running copies of the task (`task_options::redundancy`).
  std::vector<std::string> copies = {};
  /// For a streaming task: the node its items came from last (the reader's progress
  /// goes there); empty before the first.
  std::string streaming_on = {};
  /// The instance of that actor it was sent to (ids are per node: one restarted on the
  /// same node has another).
  uint64_t actor_id = 0;
};

/// What the owner needs of its node. Every function is called on whatever thread runs the
/// owner at the time and must not block.
struct owner_config {
  /// This node's name, for errors and logs.
  std::string node;
  /// How many node losses the owner restarts its children after within a period; past
  /// it, it gives up and the children of the next loss fail (escalation).
  restart_intensity intensity{20, std::chrono::seconds(60)};
  /// Sends a task or call to a node (connecting first when needed).
  std::function<void(const std::string&, wire_msg::message)> send;
  /// Lets go of arguments held for a node.
  std::function<void(std::vector<object_key>)> release;
  /// Runs a task again from the start: placed anew, its inputs shipped from here.
  std::function<void(detail::task_ptr)> resubmit;
  /// Sends an actor call again: its actor lives elsewhere now, or is restarting.
  std::function<void(std::shared_ptr<remote_actor_record>, detail::task_ptr)> call;
  /// Restarts an actor whose node cannot be reached, on a node the cluster picks.
  std::function<void(std::shared_ptr<remote_actor_record>)> restart;
  /// An answer from `from` carrying its actor's state, to a call made through a handle
  /// other than the creator's: the directory keeps the state with the creator's record,
  /// then the answer comes back (`result_atom`) without it, refused if the actor was
  /// restarted meanwhile. Empty: such an answer counts as it is.
  std::function<void(const std::string& from, wire_msg::task_result)> vouch;
  /// A result was stored on the node that made it (`where`): pull it into the task's
  /// future. A pull that finds it lost sends (retry_atom) back.
  std::function<void(detail::task_ptr, wire_msg::stored_at)> pull;
  /// Node `from` stops and hands over the results it holds for this node: passed to the
  /// object manager after the pulls of those results this owner started. May be empty.
  std::function<void(const std::string&, wire_msg::objects_hand_over)> handed_over;
  /// An item of a stream read here stayed on the node that wrote it: pull it into
  /// `slot` (of type `type`), weighted as its writer's work (`pull_weight`).
  std::function<void(detail::slot_ptr, const detail::type_descriptor*,
                     wire_msg::stored_at, double)>
      pull_item;
  /// Whether `node` ever joined the cluster (empty: every node has). Work for a node
  /// that never did waits for it up to `join_wait`, then fails naming it.
  std::function<bool(const std::string&)> joined;
  std::chrono::milliseconds join_wait{30000};
  /// Whether `node` is alive in this node's view (empty: every node is).
  std::function<bool(const std::string&)> alive;
  /// The incarnation of `node` this node's view shows (when its process started; 0: not
  /// known, or empty).
  std::function<uint64_t(const std::string&)> incarnation;
  /// The node's log.
  node_log log;
  /// The node that reads results (the actor handles in them); may be null.
  codec_context* values = nullptr;
  /// The clock of the restart intensity (empty: steady_clock).
  std::function<std::chrono::steady_clock::time_point()> now;
  /// The borrower protocol (its `notify_done` and `after_borrows` are the owner's own).
  borrow_config borrows;
};

/// The node's owner (DESIGN's `owner`): it supervises the tasks and actor calls its node
/// sent to other nodes as its children, until their results come back. A child lost with
/// its node is restarted: a task runs again, placed anew, while its own `max_retries` and
/// the owner's restart intensity allow; a call waits for its actor's restart. A result
/// lost with the node that held it makes its task run again (lineage). A child out of
/// restarts fails its future with an error that names the lost node. Stopping fails every
/// child still out with `runtime_stopped`. A task run on several nodes at once
/// (`pending_call::copies`) takes the first result; the copies still out are cancelled
/// (`task_cancel`) and a result they stored anyway is freed. A copy lost with its node,
/// or failing, leaves the others running: nothing runs again.
///   (track_atom, call, node, message)   registers `call`, then sends `message` to `node`
///                                       (once it joined: up to `join_wait`)
///   (tick_atom)                         the timer of work waiting for a node to join
///   (result_atom, from, result)         a result came back from node `from`; an
///                                       actor call's carrying the actor's state
///                                       counts once the state is kept (refused, as
///                                       the actor was restarted elsewhere since, it
///                                       runs again there)
///   (lost_atom, node, why)              `node` was lost: its children restart or fail
///   (retry_atom, task, why, error)      a result was lost: run again, or fail with error
///   (placed_atom, from, task_placed)    the head `from` placed a child sent to it on
///                                       another node: the child follows, and runs again
///                                       at once if that node is lost already
///   (cancel_atom, key)                  the task making `key` was cancelled here: the
///                                       nodes running it are told (`task_cancel`), and
///                                       a result they send anyway is freed there
///   (stream_atom, from, stream_item)    an item of a streaming child, from node `from`:
///                                       it goes to the child's reader (a repeat, from
///                                       a run again, is dropped, and its writer told
///                                       how far the reader is)
///   (stream_atom, key, taken)           the reader of child `key` took `taken` items:
///                                       the node running it is told (`stream_ack`)
///   (count_atom) -> uint64_t            children out now
/// It keeps the node's side of the borrower protocol too (see `borrow_table`):
///   (borrow_atom, from, object_borrow)      `from` borrows an object owned here
///   (unborrow_atom, from, object_unborrow)  ... and gives one borrow back
///   (done_atom, key)                        a lent object is done: borrowers get it
///   (borrow_atom, borrow_request)           a ref of another node's object was read
///   (borrow_atom, from, object_borrowed)    its owner answered
///   (unborrow_atom, key)                    a borrowed slot here went
///   (barrier_atom, borrow_barrier)          runs once the borrows asked are answered
///   (borrows_atom) -> (lent, borrowed)      objects kept for borrowers, and borrowed
using owner_actor = caf::typed_actor<
    caf::reacts_to<track_atom, pending_call, std::string, wire_msg::message>,
    caf::reacts_to<result_atom, std::string, wire_msg::task_result>,
    caf::reacts_to<lost_atom, std::string, std::string>,
    caf::reacts_to<retry_atom, detail::task_ptr, std::string, error>,
    caf::reacts_to<cancel_atom, object_key>, caf::reacts_to<tick_atom>,
    caf::reacts_to<placed_atom, std::string, wire_msg::task_placed>,
    caf::reacts_to<hand_over_atom, std::string, wire_msg::objects_hand_over>,
    caf::reacts_to<stream_atom, std::string, wire_msg::stream_item>,
    caf::reacts_to<stream_atom, object_key, uint64_t>,
    caf::replies_to<count_atom>::with<uint64_t>,
    caf::reacts_to<borrow_atom, std::string, wire_msg::object_borrow>,
    caf::reacts_to<unborrow_atom, std::string, wire_msg::object_unborrow>,
    caf::reacts_to<done_atom, object_key>, caf::reacts_to<borrow_atom, borrow_request>,
    caf::reacts_to<borrow_atom, std::string, wire_msg::object_borrowed>,
    caf::reacts_to<unborrow_atom, object_key>,
    caf::reacts_to<barrier_atom, borrow_barrier>,
    caf::replies_to<borrows_atom>::with<uint64_t, uint64_t>>;

/// Spawns the owner on the actor system's scheduler (tests step it on the test
/// coordinator).
owner_actor spawn_owner(caf::actor_system& sys, owner_config cfg);

/// The owner as its node's threads reach it: a message runs the owner on the sending
/// thread when it is idle (no thread handoff on the remote-call path), else it is queued
/// for the thread running it. Messages keep their order per sender, but for those of
/// latency-critical children, which go ahead.
class owner_ref {
  static bool urgent(const wire_msg::message& m) {
    if (auto* c = std::get_if<wire_msg::actor_call>(&m)) return c->latency_critical;
    if (auto* t = std::get_if<wire_msg::task_submit>(&m)) return t->latency_critical;
    return false;
  }

public:
  owner_ref() = default;
  explicit owner_ref(owner_actor a);

  /// A streaming child's reader reports its progress here, to go to whichever node
  /// runs the child.
  void track(pending_call call, const std::string& node, wire_msg::message m) const {
    if (auto& reader = call.task->reader) {
      auto& id = call.task->result->id();
      reader->on_taken([unit = unit_, k = object_key{id.owner, id.seq}](uint64_t taken) {
        unit->send(stream_atom::value, k, taken);
      });
    }
    // A latency-critical child, and its result, go ahead of the others waiting for the
    // owner (a flood of calls sent just before it, their results).
    if (urgent(m))
      unit_->send_urgent(track_atom::value, std::move(call), node, std::move(m));
    else
      unit_->send(track_atom::value, std::move(call), node, std::move(m));
  }
  void result(const std::string& from, wire_msg::task_result r) const {
    if (r.latency_critical)
      unit_->send_urgent(result_atom::value, from, std::move(r));
    else
      unit_->send(result_atom::value, from, std::move(r));
  }
  void lost(const std::string& node, const std::string& why) const {
    unit_->send(lost_atom::value, node, why);
  }
  void retry(detail::task_ptr t, const std::string& why, error e) const {
    unit_->send(retry_atom::value, std::move(t), why, std::move(e));
  }
  void cancel(const object_key& result) const { unit_->send(cancel_atom::value, result); }
  /// Node `from` (the head) placed a child on another node.
  void placed(const std::string& from, wire_msg::task_placed m) const {
    unit_->send(placed_atom::value, from, std::move(m));
  }
  /// Node `from` stops and hands over the results it holds for this node.
  void handed_over(const std::string& from, wire_msg::objects_hand_over m) const {
    unit_->send(hand_over_atom::value, from, std::move(m));
  }
  void stream(const std::string& from, wire_msg::stream_item item) const {
    unit_->send(stream_atom::value, from, std::move(item));
  }
  void borrow(detail::slot_ptr slot, const detail::type_descriptor* type) const {
    unit_->send(borrow_atom::value, borrow_request{std::move(slot), type});
  }
  void dropped(const object_key& k) const { unit_->send(unborrow_atom::value, k); }
  void barrier(std::function<void()> then) const {
    unit_->send(barrier_atom::value, borrow_barrier{std::move(then)});
  }
  /// A borrower-protocol message from node `from`.
  template <class Message> void borrows(const std::string& from, Message m) const {
    if constexpr (std::is_same_v<Message, wire_msg::object_unborrow>)
      unit_->send(unborrow_atom::value, from, std::move(m));
    else
      unit_->send(borrow_atom::value, from, std::move(m));
  }

  const owner_actor& handle() const { return actor_; }

private:
  owner_actor actor_;
  std::shared_ptr<inline_unit> unit_;
};

} // namespace swarm::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::actors::pending_call)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::wire_msg::task_placed)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::error)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::actors::borrow_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::actors::borrow_barrier)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::wire_msg::object_borrow)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::wire_msg::object_borrowed)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::wire_msg::object_unborrow)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::wire_msg::stream_item)
