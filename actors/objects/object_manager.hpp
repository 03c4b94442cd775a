#pragma once

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "actors/common/owner_counter.hpp"
#include "actors/common/protocol.hpp"
#include "actors/objects/cached_copy.hpp"
#include "actors/objects/protocol.hpp"
#include "base/result.hpp"
#include "framework/detail/device_memory.hpp"
#include "framework/detail/object_slot.hpp"
#include "framework/detail/type_descriptor.hpp"
#include "transport/landing_table.hpp"
#include "transport/wire_message.hpp"

namespace swarm::actors {

/// Names the node outside the cluster file (a client, or a node that joined by the
/// head's address) that has an owner index past the file's nodes; empty when none has it
/// (an index of a node that joined again since holds under its new one).
using joined_names = std::function<std::string(uint64_t owner_index)>;

/// The node whose owner made the object `k`: `nodes` in the cluster file's order, then
/// those `joined`; empty for an index none has.
std::string owner_node_of(const object_key& k, const std::vector<std::string>& nodes,
                          const joined_names& joined = {});

/// Keeps a value other nodes may pull from here. `exported`: an argument of a task or
/// call sent elsewhere (counted; released when its result comes back); otherwise a result
/// made here for an owner on another node (kept until that owner frees it).
struct hold_request {
  object_key key;
  detail::boxed_value value;
  /// The value laid out for pulls (its large buffers are sent from where they are).
  std::shared_ptr<const bulk_layout> layout;
  bool exported = false;
  /// Kept as long as the value is held: a result's slot, whose store lease counts its
  /// bytes on this node.
  std::shared_ptr<const void> keep;
};

/// Holds a value as `hold` does and keeps it on `copies` other nodes too (replicas),
/// until this node's store lets go of it or its owner frees it. `done` (may be empty)
/// runs on the object manager's thread once each node asked answered, with those that
/// keep one.
struct replicate_request {
  hold_request hold;
  uint32_t copies = 0;
  std::function<void(std::vector<std::string>)> done;
  /// A node chosen only when no other is left: the owner of a result, which keeps a
  /// copy of its own anyway.
  std::string avoid = {};
};

/// Reads the object `ref` as a `type`: from here when held or still alive from an
/// earlier pull, otherwise pulled in chunks from `ref.node` and `ref.holders`, and from
/// other readers the holders name. A null `type` reads the object's layout bytes as a
/// `std::vector<uint8_t>` (a replica: no value is made). `done` runs on the object
/// manager's thread and must not block.
struct fetch_request {
  wire_msg::remote_ref ref;
  const detail::type_descriptor* type = nullptr;
  std::function<void(result<detail::boxed_value>)> done;
  /// The read's share of this node's incoming bandwidth against its other pulls (see
  /// `pull_weight`); a pull read by several takes the largest.
  double weight = 1;
};

/// The weight of a pull read for work of `priority` in a job of `job_share`: pulls that
/// run at once ask for chunks in proportion to their weights, so on a shared link one of
/// priority p + 1 gets `pull_priority_step` times the bytes of one of priority p, and
/// among equal priorities jobs get bytes in proportion to their shares. The ratio
/// between any two pulls is at most `max_pull_scale`.
double pull_weight(int32_t priority, double job_share);

/// How much more bandwidth each step of priority gives a pull (see `pull_weight`).
inline constexpr double pull_priority_step = 4;
/// The most times its base window of chunks a pull asks for at once, against the
/// lightest pull running beside it.
inline constexpr size_t max_pull_scale = 16;

/// The owner's side: a result owned here whose primary copy stays on `node`.
struct located_object {
  object_key key;
  std::string node;
  std::weak_ptr<detail::object_slot> slot;
};

/// A pull from another node that ended, for the timeline: one per node it read from,
/// with the bytes that came from there.
struct transfer_event {
  object_key key;
  std::string from;
  uint64_t bytes = 0;
  bool failed = false;
  int64_t started_us = 0; ///< wall clock, microseconds since the epoch
  int64_t ended_us = 0;
};

/// How many of the last pulls that ended the object manager keeps for the timeline.
inline constexpr size_t transfers_kept = 1000;

struct object_manager_config {
  /// This node's name.
  std::string node;
  /// Every node of the cluster file, in its order, and those that joined otherwise (see
  /// `owner_node_of`).
  std::vector<std::string> nodes;
  joined_names joined;
  /// Sends a message to a node; never blocks.
  std::function<void(const std::string&, wire_msg::message)> send;
  /// Writes an object row into the control store (on the head) or sends it there.
  std::function<void(wire_msg::object_location)> publish;
  /// Bytes per chunk a pull asks for, and how many chunks may be asked for at once.
  uint64_t chunk_bytes = 4 << 20;
  size_t pull_window = 4;
  /// Bytes of pulled values kept here after their readers let go (secondary copies), so
  /// reading one again moves nothing; the least recently read go first past it.
  uint64_t keep_pulled_bytes = 256 << 20;
  /// Counts a pulled copy's bytes against the node's store, from the start of its pull
  /// for as long as the value lives (`store_full` when it does not fit: kept copies are
  /// dropped, least recently read first, to make room). Empty: nothing is counted.
  std::function<result<std::unique_ptr<detail::store_lease>>(const object_key&, uint64_t)>
      reserve;
  /// Registers a kept copy with the store, which evicts it when an object needs the room
  /// (and nobody reads it then). Empty: only the manager's budget drops kept copies.
  std::function<void(std::weak_ptr<cached_copy>)> cache;
  /// How busy a node is (its queued and running tasks): a pull asks the least busy
  /// holder first. May be empty.
  std::function<double(const std::string&)> load;
  /// Up to `n` alive nodes other than this one and `exclude`, least busy first: where
  /// replicas go. Empty: no replicas are made.
  std::function<std::vector<std::string>(size_t n, const std::set<std::string>& exclude)>
      pick;
  /// Whether `node` is alive in this node's view: a node that stops hands the results
  /// it holds over to the live owners only. Empty: every node is.
  std::function<bool(const std::string&)> alive;
  /// Whether an owner id is one an earlier life of this node made (its objects went with
  /// it): asked for such an object, the node says its owner died. May be empty.
  std::function<bool(uint64_t owner)> earlier_owner;
  /// Counts a read of another node's object: found here, or pulled. May be empty.
  std::function<void(bool hit)> count_lookup;
  /// Where pulled plain buffers (strings, vectors of numbers) get their memory and give
  /// it back when freed: a pull into kept memory takes no page faults. Null: the
  /// allocator's. Outlives the manager.
  detail::value_pool* pool = nullptr;
  /// Where the network receives the chunks of a pull once its value is made: straight
  /// into the value's buffers, at their offsets. Null: chunks arrive in frame buffers
  /// and are copied into the value here.
  std::shared_ptr<wire_msg::landing_table> landings;
  /// Logs a warning line of this node; may be empty.
  std::function<void(const std::string&)> warn;
  /// The node that reads pulled values (the actor handles in them); may be null.
  codec_context* values = nullptr;
  /// This node's GPUs when device buffers pass to and from other node processes of its
  /// host by mapping (see `device_lending`); null: they travel as bytes.
  std::shared_ptr<detail::device_memory> devices;
};

/// The node's object manager: the values it holds for other nodes, the pulls it runs
/// for readers here, the pulled values still alive here, and where the results its
/// owners made elsewhere live. It serves pulls chunk by chunk from a value's bulk layout:
/// its head, then its large buffers straight from the value's memory. A pull asks for
/// `pull_window` chunks at a time; once the head is in, it makes the value, and each
/// later chunk is received into the value's buffers where it belongs (or copied there
/// from the frame it came in), so a pulled object takes its size plus at most the
/// chunks asked for before its head was in.
///
/// Routing: a copy here is read first; otherwise the pull asks the least busy holder the
/// reference names for the head, then stripes its chunks round robin over up to four
/// sources: the holders, and the other readers a holder names with the chunk at offset 0
/// (those it sent parts of the object to). A node serves what it holds, the copies it
/// pulled, and the part of a pull in progress that came in; asked for bytes still coming
/// from a whole copy it answers once they are in, otherwise it sends the reader to a
/// whole copy. So a broadcast spreads: each reader's copy serves the others. A source
/// that lost the object, or its node, is asked for nothing more; its chunks go to
/// another holder. When no holder is left, the pull fails (`object_lost`, or
/// `owner_died` when the owner went with its value); results located on a lost node
/// count as gone from there, and results held here for owners there are dropped.
/// Stopping fails every pull in flight. Freeing an object here tells the nodes this
/// node sent parts of it to drop their copies.
///
/// Device buffers: between node processes of one host (and backend), a pull of a device
/// buffer first asks its holder to share it; one held on a device there is mapped here
/// (see `device_lending`), and only a refusal (another host, the buffer in host memory)
/// or a mapping that fails pulls its bytes. A bulk layout reads a device buffer's bytes
/// from its device when they are first sent, not when it is held.
///
/// Replicas: a node holding an object asks the least busy other nodes to keep whole
/// copies; each pulls it as bytes (no value is made until a reader there asks for one)
/// and keeps it until the holder's store, or the object's owner, frees it. A replica
/// lost with its node is asked of another node.
///   (hold_atom, hold_request)              keep a value for other nodes
///   (replicate_atom, replicate_request)    ... and on other nodes too
///   (replica_atom, peer, object_replicate) `peer` asks this node to keep a replica
///   (replicated_atom, peer, object_replicated)  `peer` answered such an ask
///   (release_atom, keys)                   tasks that took exported values are done
///   (free_atom, key)                       an owner freed a result held here, or an
///                                          object this node pulled a copy of (the
///                                          copy goes)
///   (freed_atom, key)                      this node's store let go of an object:
///                                          the nodes it sent copies to drop them
///   (pull_atom, peer, object_pull)         a chunk asked for by `peer`
///   (chunk_atom, peer, object_chunk)       a chunk of a pull running here, from `peer`
///   (fetch_atom, fetch_request)            read an object, here or pulled
///   (locate_atom, located_object)          the primary copy of a result is elsewhere
///   (forget_atom, key)                     that result's owner let it go (its copy
///                                          kept here goes too)
///   (lost_atom, peer, why)                 the connection to `peer` closed
///   (hand_over_atom) -> uint64_t           this node stops: hands the results it holds
///                                          for owners elsewhere over to them (see
///                                          `hand_over_table`); answers how many were
///                                          taken once every owner answered
///   (hand_over_atom, peer, objects_hand_over)  `peer` stops and hands these over
///   (handed_atom, peer, objects_taken)     an owner's answer to this node's hand-over
///   (share_atom, peer, device_share)       `peer`'s answer to an ask to share
///   (unmapped_atom, peer, device_released) `peer` unmapped a buffer lent it
///   (unmapped_atom, peer, key)             a buffer `peer` lent was unmapped here
///   (count_atom) -> uint64_t               pulled values remembered (node_stats)
///   (kept_atom) -> uint64_t                bytes of pulled values kept (node_stats)
///   (transfers_atom) -> transfer events    the last `transfers_kept` pulls that ended,
///                                          oldest first
using object_manager_actor = caf::typed_actor<
    caf::reacts_to<hold_atom, hold_request>,
    caf::reacts_to<replicate_atom, replicate_request>,
    caf::reacts_to<replica_atom, std::string, wire_msg::object_replicate>,
    caf::reacts_to<replicated_atom, std::string, wire_msg::object_replicated>,
    caf::reacts_to<release_atom, std::vector<object_key>>,
    caf::reacts_to<free_atom, object_key>, caf::reacts_to<freed_atom, object_key>,
    caf::reacts_to<pull_atom, std::string, wire_msg::object_pull>,
    caf::reacts_to<chunk_atom, std::string, wire_msg::object_chunk>,
    caf::reacts_to<fetch_atom, fetch_request>,
    caf::reacts_to<locate_atom, located_object>, caf::reacts_to<forget_atom, object_key>,
    caf::reacts_to<lost_atom, std::string, std::string>,
    caf::replies_to<hand_over_atom>::with<uint64_t>,
    caf::reacts_to<hand_over_atom, std::string, wire_msg::objects_hand_over>,
    caf::reacts_to<handed_atom, std::string, wire_msg::objects_taken>,
    caf::reacts_to<share_atom, std::string, wire_msg::device_share>,
    caf::reacts_to<unmapped_atom, std::string, wire_msg::device_released>,
    caf::reacts_to<unmapped_atom, std::string, object_key>,
    caf::replies_to<count_atom>::with<uint64_t>,
    caf::replies_to<kept_atom>::with<uint64_t>,
    caf::replies_to<transfers_atom>::with<std::vector<transfer_event>>>;

/// Spawns the object manager; `detached`: on a thread of its own, so copying and
/// decoding large objects holds up neither the network nor the scheduler (tests run it
/// on the test coordinator).
object_manager_actor spawn_object_manager(caf::actor_system& sys,
                                          object_manager_config cfg,
                                          bool detached = true);

} // namespace swarm::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::actors::object_key)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<swarm::actors::object_key>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::actors::hold_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::actors::replicate_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::wire_msg::object_replicate)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::wire_msg::objects_hand_over)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::wire_msg::objects_taken)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::wire_msg::object_replicated)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::wire_msg::device_share)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::wire_msg::device_released)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::actors::fetch_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::actors::located_object)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<swarm::actors::transfer_event>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::wire_msg::object_pull)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::wire_msg::object_chunk)
