#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include <caf/actor.hpp>

#include "actors/common/wall_clock.hpp"
#include "actors/control_store/control_client.hpp"
#include "actors/node/local_node.hpp"
#include "actors/node/membership.hpp"
#include "actors/objects/object_manager.hpp"
#include "actors/ownership/owner.hpp"
#include "actors/ownership/stream_sender.hpp"
#include "actors/scheduling/global_scheduler.hpp"
#include "actors/user_actors/actor_directory.hpp"
#include "framework/cluster_config.hpp"
#include "transport/transport.hpp"

namespace swarm::actors {

/// Where leases of values held on other nodes send their `object_free` and actors made
/// for this node their `actor_kill`; cut at shutdown so late releases do nothing.
struct release_sink {
  // Leases and handles hold the sink past the node and release on any thread; the node
  // sets and cuts net and the callbacks under it, so a late release does nothing.
  std::mutex mtx;
  wire_msg::transport* net = nullptr;
  std::function<void(const object_id&)> forget;
  std::function<void(const object_id&)> freed;
  std::function<void(const object_key&)> unborrow;
  /// This node's name, and what handles a message for this node itself (an actor
  /// restarted onto its owner's node is released here, not over the network).
  std::string self;
  std::function<void(const wire_msg::message&)> here;

  /// Sends `m` to `node` unless this node stopped.
  void send(const std::string& node, const wire_msg::message& m);
  /// Tells `node` this node no longer needs its copy of `id`, and forgets it here.
  void free_remote(const std::string& node, const object_id& id);
  /// This node's store let go of `id`: nodes that pulled copies of it drop them.
  void freed_here(const object_id& id);
  /// A slot borrowing object `k` from another node went: its borrow is given back.
  void unborrowed(const object_key& k);
};

/// What the parts of a cluster node share: the cluster file and this node's entry, the
/// in-process node, the network, the handles of the role actors, and the ways to reach
/// other nodes (send, connect, request, place) and to move values to and from them. The
/// cluster node owns it and the parts; the parts (`cluster_tasks`, `cluster_actors`,
/// `cluster_store`) hold it by reference.
class node_link {
public:
  using key = object_key;
  using values_cb = std::function<void(result<std::vector<detail::boxed_value>>)>;
  using value_cb = std::function<void(result<detail::boxed_value>)>;

  /// The link of node `node` of `config`; throws `failure` when the file has no such
  /// node.
  node_link(cluster_config config, const std::string& node);

  // -- who this node is ---------------------------------------------------------------
  cluster_config cfg;
  node_spec self;
  uint64_t index = 0;
  /// Which life of the node this is (its incarnation): when its process started, or
  /// when the head fenced the life before (ms since the epoch).
  std::atomic<uint64_t> life{wall_ms()};
  bool is_head() const { return self.role == node_spec::role_type::head; }
  const std::string& head_name() const { return cfg.head().name; }
  /// Owner ids carry the node's index above bit 40, so ids are unique cluster-wide; below
  /// it this life's count (see `owner_counter`).
  uint64_t new_owner_id();
  /// Whether `id` is one of this node's owner ids that this life never made: an
  /// earlier life's, whose objects went with it.
  bool earlier_owner(uint64_t id) const;
  owner_counter owners{life.load()};

  // -- parts, owned by the cluster node -------------------------------------------------
  local_node* local = nullptr;
  /// The cluster node, as the node that reads values (the actor handles in them).
  codec_context* values = nullptr;
  wire_msg::transport* net = nullptr;
  std::shared_ptr<release_sink> releases = std::make_shared<release_sink>();
  caf::actor agent;
  caf::actor global; // the head's global scheduler
  membership_view members;
  hosted_table hosted; // written by the directory
  membership_actor membership;
  control_client_actor control;
  object_manager_actor objects;
  actor_directory_actor directory;
  owner_ref owner;
  stream_senders_actor streams;
  /// Handles a message for this node itself (what the network's handler does).
  std::function<void(const std::string&, wire_msg::message&&)> deliver_here;

  // -- life cycle: handlers hold `alive` shared while they run; the destructor takes it
  // alone to stop them
  // ---------------------------------------------------------------------
  // Guards closing: I/O threads and late callbacks run outside any actor, and the
  // destructor must wait until none runs before the parts go.
  std::shared_mutex alive_mtx;
  bool closing = false;

  // -- reaching other nodes -------------------------------------------------------------
  /// Sends at once: the transport dials a node not connected yet and holds what goes to
  /// it meanwhile (see `resolve`). What waits for a client goes when it connects. A task
  /// or call that cannot be delivered fails its owner.
  void send_to(const std::string& node, wire_msg::message m);
  /// Where the transport dials `node` for a send: its address, unless it is a client or
  /// known to be gone.
  std::optional<std::pair<std::string, uint16_t>> resolve(const std::string& node) const;
  /// Whether a message to `node` can go: connected, or to be dialled.
  bool reachable(const std::string& node) const;
  /// `m` could not be delivered to `node`: a task or call fails its owner, saying `why`.
  void undelivered(const std::string& node, const wire_msg::message& m,
                   const std::string& why);
  /// `send_to`, unless the node is stopping (for callbacks that may run late).
  void send_while_open(const std::string& node, wire_msg::message m);
  /// A peer's connection came up: what was held for it (a client that had not dialled
  /// this node yet) goes out, on the agent.
  void peer_up(const std::string& node);
  result<void> connect_to(const std::string& node);
  /// Where `node` listens: its row of the file, else that of the node table (a node
  /// that joined by the head's address); an error for a client or a name neither has.
  result<std::pair<std::string, uint16_t>> address_of(const std::string& node) const;
  /// Whether the membership shows `node` dead (a name it does not list may be a node or
  /// client whose row is on its way).
  bool gone(const std::string& node) const;
  /// Whether the membership shows `node` alive.
  bool alive(const std::string& node) const;
  /// The life of `node` the membership shows (when its process started); 0 when it does
  /// not list it.
  uint64_t incarnation_of(const std::string& node) const;
  /// Runs `f` on the node's agent, which may block (connects, lookups).
  void post(std::function<void()> f);
  /// Runs `f` on the agent once `delay` has passed.
  void post_after(std::chrono::milliseconds delay, std::function<void()> f);
  /// Starts the agent (on the in-process node's actor system).
  void start_agent();
  /// Sends `m` to `node` with a fresh request id; `then` gets its answer (or why there is
  /// none) on another thread, without blocking this one.
  void request_then(const std::string& node, wire_msg::message m,
                    std::function<void(result<wire_msg::message>)> then);
  /// Sends `m` to `node` with a fresh request id and waits for its answer.
  result<wire_msg::message> request(const std::string& node, wire_msg::message m);
  /// As `request`, waiting at most `wait` (under 10 s) for an answer the other node may
  /// hold back (a long poll); none within it is `errc::timeout`.
  result<wire_msg::message> request(const std::string& node, wire_msg::message m,
                                    std::chrono::milliseconds wait);
  /// Asks the head's global scheduler for a node for work of `priority`; `then` runs on
  /// the scheduler. The nodes in `avoid` are chosen only when no other can take it.
  void place(const resource_set& demand, work_needs needs,
             const std::vector<wire_msg::arg>& args, int32_t priority,
             std::function<void(result<std::string>)> then,
             std::vector<std::string> avoid = {});
  /// The global scheduler's choice, waited for (on the head only).
  result<std::string> place_now(const resource_set& demand, work_needs needs);

  // -- values to and from other nodes
  // ----------------------------------------------------
  /// `a` as it travels: inline when small; otherwise held here for the receiver to pull
  /// (its key added to `exported`) or named where its primary copy lives.
  wire_msg::arg export_arg(const detail::task_arg& a, std::vector<key>& exported);
  void release_exports(const std::vector<key>& exported);
  /// Decodes or pulls `args` as `params`, pulls weighted by `weight` (see
  /// `pull_weight`); `done` runs once all are here, or the first failed.
  void gather_args(const std::vector<wire_msg::arg>& args,
                   const std::vector<const detail::type_descriptor*>& params,
                   double weight, values_cb done);
  /// Reads `ref` through the object manager, a pull weighted by `weight`; `done` runs on
  /// its thread.
  void fetch(const wire_msg::remote_ref& ref, const detail::type_descriptor* type,
             value_cb done, double weight = 1);
  /// A task or call that came from another node, keeping the owner's result id; its
  /// outcome goes back to `reply_to` (for a call, naming the actor instance `actor_id`
  /// that ran it, and with `state_for_owner` the state its host saves for the actor's
  /// owner, the caller). Null (the error already sent) when `args` failed.
  detail::task_ptr incoming(std::string name, const detail::invoker* fn,
                            const std::vector<const detail::type_descriptor*>& params,
                            const detail::type_descriptor* result_type,
                            const object_id& id, const std::string& reply_to,
                            result<std::vector<detail::boxed_value>>& args,
                            uint32_t replicas = 1, bool latency_critical = false,
                            uint64_t actor_id = 0, bool state_for_owner = false);
  /// Where a streaming task or call run here for `reader` writes its items (those of
  /// the stream whose task's result is `result`, owned by `items_owner` there).
  std::shared_ptr<detail::stream_sink> stream_to(const std::string& reader,
                                                 const object_id& result,
                                                 uint64_t items_owner, uint32_t window);
  /// The object `id` valued `v` as it travels to another node: inline when small (and
  /// holding no refs); otherwise held here for it to pull, with `keep` kept meanwhile.
  wire_msg::task_result travel(const object_id& id, const detail::boxed_value& v,
                               std::shared_ptr<const void> keep = nullptr);
  /// Keeps the value of `slot` on `copies` distinct nodes: this one, holding it for
  /// other nodes to pull, and the least busy others. Nothing for a value small enough
  /// to travel inline (every reader gets its own), or a slot with no value.
  void replicate(const detail::slot_ptr& slot, uint32_t copies);

  /// Refs of other nodes' objects this node has read (borrowed slots made), ever.
  std::atomic<uint64_t> borrows_made{0};

  /// `e` as another node reads it: naming this node, unless it already does.
  error named_here(error e) const;

private:
  // What waits, on the agent, for a client that has not connected to this node yet (a
  // client dials every node and nobody dials it, so its results may be ready first), or
  // a name the membership does not list yet. Kept until it connects, is found dead, or
  // `cfg.join_wait` passes. The agent's only.
  struct held_messages {
    std::deque<wire_msg::message> messages;
    std::chrono::steady_clock::time_point until;
  };
  std::map<std::string, held_messages> held_;
  // On the agent: holds `m` for the client `node`, unless it can go now.
  void hold_for(const std::string& node, wire_msg::message m);
  // On the agent: sends what is held for `node`; drops what waited too long.
  void flush_held(const std::string& node);

  // Sends the outcome of `slot` to `to` once it is done (an actor call's naming the
  // instance `actor_id`, with the state in `carried` if its host saved one for its
  // owner); a large value stays here, and on `replicas - 1` other nodes before `to`
  // hears of it.
  void reply_when_done(const detail::slot_ptr& slot, const std::string& to,
                       uint32_t replicas, bool latency_critical, uint64_t actor_id,
                       std::shared_ptr<detail::carried_state> carried = nullptr);
  // Whether `v` is small enough to travel inline (every reader gets its own copy).
  bool travels_inline(const detail::boxed_value& v) const;
  // `v` encoded, when it is small enough to travel inline (and, unless `refs_allowed`,
  // holds no object refs: a result's refs stay alive while it is held here).
  std::optional<wire_msg::value> inline_value(const detail::boxed_value& v,
                                              bool refs_allowed = true);
  // `done`, run once the owners of the objects this node borrowed meanwhile (reading
  // the value) have answered: a reader's borrow is known to the owner before the value
  // reaches it, so whoever lent the value may let go of it then.
  template <class T>
  std::function<void(result<T>)> after_borrows(std::function<void(result<T>)> done);
  // `v` laid out to be held as `k` for other nodes to pull (see `hold_request`).
  hold_request hold_request_for(const key& k, const detail::boxed_value& v, bool exported,
                                std::shared_ptr<const void> keep);
  // Holds `v` as `k` for other nodes to pull (`exported`: an argument of a task or call
  // sent elsewhere); its size as pulled.
  uint64_t hold(const key& k, const detail::boxed_value& v, bool exported,
                std::shared_ptr<const void> keep = nullptr);
};

} // namespace swarm::actors
