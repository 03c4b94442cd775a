#pragma once

#include <caf/actor_clock.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/common/protocol.hpp"
#include "actors/common/wall_clock.hpp"
#include "actors/node/protocol.hpp"
#include "base/node_log.hpp"
#include "base/visibility.hpp"
#include "transport/wire_message.hpp"

namespace swarm::actors {

/// A node of the cluster as this node's membership last saw it.
struct peer_view {
  wire_msg::node_info info;
  /// When its last heartbeat (or, for this node, the last tick) arrived.
  caf::actor_clock::time_point last_seen;
};

/// Every node this one knows, by name. A published table never changes.
using peer_table = std::map<std::string, peer_view>;

/// Up to `n` nodes of `peers` that are alive, other than `self`, and `able`, the least
/// busy (queued and running tasks) first, then by name.
std::vector<std::string> least_busy(const peer_table& peers, const std::string& self,
                                    size_t n,
                                    const std::function<bool(const peer_view&)>& able);

/// `info` with the names of what it registered but not their signatures: those are
/// checked by the head when a node joins, and kept in its control store; the other
/// nodes need only the names.
wire_msg::node_info without_signatures(wire_msg::node_info info);

/// The node table as `swarm status` shows it and nodes get it: ages as of `now`, without
/// signatures.
wire_msg::node_table to_node_table(const peer_table& peers,
                                   caf::actor_clock::time_point now);

/// The peer table the membership actor published last (before it first runs, the node's
/// own row). Only that actor publishes; any thread reads (placement, feasibility,
/// status) without waiting for it.
class SWARM_EXPORT membership_view {
public:
  membership_view();

  /// The table as of the last change.
  std::shared_ptr<const peer_table> get() const;
  /// The same, read for the nodes' loads (queued, running, available, store) to place
  /// work by: a node that reads them gets their changes from the head (its heartbeats
  /// say so); one that does not gets only changes of state, and its copy of the loads
  /// ages. Its first reads after a pause see the loads as of its last.
  std::shared_ptr<const peer_table> loads() const;
  /// Whether `loads` was called since the last call (membership's tick).
  bool take_load_read();

  /// Replaces the table; only the membership actor calls this.
  void publish(peer_table table);

  /// The lives of nodes outside the file that the head found dead and then dropped from
  /// the table, the latest `dropped_kept`: they stay fenced (see `join_of`).
  std::shared_ptr<const std::vector<wire_msg::node_life>> dropped() const;
  /// Replaces them; only the membership actor calls this.
  void publish_dropped(std::vector<wire_msg::node_life> lives);
  static constexpr size_t dropped_kept = 1024;

private:
  std::shared_ptr<const peer_table> table_;
  std::shared_ptr<const std::vector<wire_msg::node_life>> dropped_;
  mutable std::atomic<bool> load_read_{false};
};

/// The join of a node whose row is `self`, holding the key-value placement `placement`,
/// as its membership's `view` stands: the lives of other nodes it shows dead, or dropped
/// once dead (a head started again fences them too), and the life of the head `head` it
/// followed.
SWARM_EXPORT wire_msg::join join_of(wire_msg::node_info self,
                                    wire_msg::kv_placement placement,
                                    const membership_view& view, const std::string& head);

/// What membership needs to know about the cluster it is part of.
struct membership_config {
  /// This node, as it joins.
  wire_msg::node_info self;
  std::string head;
  /// Every node of the cluster file, in its order: the control-store chain's candidates.
  std::vector<std::string> nodes;
  /// How many nodes hold each control-store shard, the head included.
  size_t replication = 1;
  /// Shards of each control-store table, and the nodes serving the key-value table's
  /// (more than 1: the head places them, see `kv_placer`).
  size_t gcs_shards = 1;
  size_t gcs_hosts = 1;
  std::chrono::milliseconds heartbeat_interval{500};
  std::chrono::milliseconds node_timeout{2000};
  /// The node's log.
  node_log log;
  /// Milliseconds since the Unix epoch, as this node reads them: where a new life's
  /// incarnation, the table's versions and the key-value placement's epochs start (a
  /// simulation gives its virtual clock, so that a seed replays the same run).
  std::function<uint64_t()> wall_clock = wall_ms;
};

/// What membership asks of the node around it. The node's implementation may block in
/// none of these: `dial` and `rejoin` hand their connect to another actor.
class SWARM_EXPORT membership_port {
public:
  virtual ~membership_port();

  /// Sends `m` to `peer` when a connection to it is open; false otherwise.
  virtual bool send(const std::string& peer, const wire_msg::message& m) = 0;
  /// Sends `m` to each of `peers`, encoded once where the node can; those it could not
  /// reach.
  virtual std::vector<std::string> send_all(const std::vector<std::string>& peers,
                                            const wire_msg::message& m);
  virtual bool connected(const std::string& peer) = 0;
  /// How long nothing arrived from `peer`; empty when the transport cannot tell.
  virtual std::optional<std::chrono::milliseconds> quiet_for(const std::string& peer) = 0;
  /// Closes the connection to `peer`; its down report comes back as `down_atom`.
  virtual void disconnect(const std::string& peer, const std::string& why) = 0;
  /// Connects to `peer`, off the membership's thread.
  virtual void dial(const std::string& peer) = 0;
  /// A worker whose connection to the head is gone, or whose join went unanswered: joins
  /// again (on the connection open, or a new one), off the membership's thread, one
  /// attempt at a time.
  virtual void rejoin() = 0;
  /// The head: a node's row changed (the control store's node table, the global
  /// scheduler).
  virtual void record(const wire_msg::node_info& info) = 0;
  /// The head: a node outside the file (a client, a node that joined by address) that
  /// left is dropped from the node table (its row is gone).
  virtual void forget(const std::string& node) = 0;
  /// The head: the nodes that hold the control store's shards changed.
  virtual void set_chain(std::vector<std::string> members) = 0;
  /// Where the key-value table's shards are served (the head's placement, applied on
  /// the head; another node's comes as a message).
  virtual void set_kv_placement(const wire_msg::kv_placement& p);
  /// The version of that placement this node holds (its heartbeats say it).
  virtual uint64_t kv_placement_version();
  /// The connection to `peer` closed: what was in flight there fails over. On the head
  /// this comes after the node is recorded dead, so retries never go back to it.
  virtual void lost(const std::string& peer, const std::string& why) = 0;
  /// Tasks placed on this node and not yet finished.
  virtual uint32_t queued() = 0;
  /// This node's object store right now; must not block.
  virtual wire_msg::store_usage store() = 0;
  /// This node's local scheduler, asked for the resources not held by running work
  /// (its stats); invalid when there is none to ask.
  virtual caf::actor scheduler() = 0;
  /// Another node: the head found this life of it dead, `why`; it is the life
  /// `incarnation` now. Stops what it hosted for other nodes (restarted elsewhere), then
  /// joins again, off the membership's thread.
  virtual void fenced(uint64_t incarnation, const std::string& why) = 0;
};

/// The node's membership in its cluster: joins, heartbeats, the peer table and failure
/// verdicts. On the head it keeps the table: a join or a heartbeat marks a node alive,
/// silence for `node_timeout` (no heartbeat and no bytes) marks it dead and closes its
/// connection. The table is versioned: a node gets it whole when it joins (or asks, in a
/// heartbeat, after it missed a change), then each tick only what changed, encoded once
/// for all that hold the same version (rows new to the table whole, without signatures;
/// the state of the others, and their load only to the nodes whose heartbeats ask for it:
/// see `table_feed`); the rows of nodes that joined go out within 20 ms, one change for
/// all that joined meanwhile. A heartbeat costs the head O(1). On every node the view is
/// published when a reader must see a change at once (a join, a death, a node back), else
/// at most once a tick, and only when something changed. On another node it heartbeats
/// the head each `heartbeat_interval`, joins again when the head's connection is gone,
/// and takes the head's table as the truth: it closes its connections to dead nodes (a
/// client dials every live one), and its heartbeats ask for the nodes' loads while this
/// node reads them (`membership_view::loads`) and for ten heartbeats (at least 5 s)
/// after. A life of a node the head found dead is fenced for good: its heartbeats and
/// joins are answered with `node_fenced`, and the node joins again as a new life (a later
/// incarnation) once it has stopped the actors it hosted for others, which their owners
/// restarted elsewhere. A head started again learns the verdicts of the head before it
/// from the joins (the lives their tables show dead): it holds the join of a node that
/// followed another head until every node of its file joined, or its node timeout
/// passed, and fences a life it took back as soon as a later join shows it dead.
///   (join_atom, join)                   the head: a node joins (again)
///   (heartbeat_atom, peer, heartbeat)   the head: a node's heartbeat
///   (table_atom, node_table)            a worker: the head's table
///   (fenced_atom, node_fenced)          a worker: the head found this life dead
///   (down_atom, peer, why)              a connection closed
///   (stopped_atom, peer, report)        the head: a node that stops says what it does
///                                       (kept in its row, `stop_report`)
///   (tick_atom)                         the timer; the actor sends it to itself
///   (joined_atom)                       the head: sends the rows of the nodes that
///                                       joined in the last few ms; sent to itself
///   (watch_atom, who, on)               `who` hears (view_atom) of each view published
using membership_actor =
    caf::typed_actor<caf::reacts_to<join_atom, wire_msg::join>,
                     caf::reacts_to<heartbeat_atom, std::string, wire_msg::heartbeat>,
                     caf::reacts_to<table_atom, wire_msg::node_table>,
                     caf::reacts_to<fenced_atom, wire_msg::node_fenced>,
                     caf::reacts_to<down_atom, std::string, std::string>,
                     caf::reacts_to<stopped_atom, std::string, std::string>,
                     caf::reacts_to<tick_atom>, caf::reacts_to<joined_atom>,
                     caf::reacts_to<watch_atom, caf::actor, bool>>;

/// Spawns the membership of the node `cfg.self`. It publishes into `view` and calls
/// `port`; both must outlive it. `detached`: on a thread of its own, so heartbeats and
/// verdicts never wait behind busy scheduler threads (tests run it on the test
/// coordinator instead).
SWARM_EXPORT membership_actor spawn_membership(caf::actor_system& sys,
                                               membership_config cfg,
                                               membership_port& port,
                                               membership_view& view,
                                               bool detached = true);

} // namespace swarm::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::wire_msg::node_info)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::wire_msg::kv_placement)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::wire_msg::join)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::wire_msg::heartbeat)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::wire_msg::node_table)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::wire_msg::node_fenced)
