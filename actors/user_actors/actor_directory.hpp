#pragma once

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/common/protocol.hpp" // allows actor_record_ptr in messages
#include "actors/common/wire_routes.hpp"
#include "actors/user_actors/hosted_table.hpp"
#include "actors/user_actors/protocol.hpp"
#include "actors/user_actors/remote_actor_record.hpp"
#include "base/node_log.hpp"

namespace swarm::actors {

/// Begins bringing back `r`, lost as `id` (0: whichever instance) with its node `peer`
/// (`remote_actor_record::recover`), and logs in `log` what began.
remote_actor_record::recovery recover(const node_log& log, remote_actor_record& r,
                                      const std::string& peer, uint64_t id,
                                      const std::string& why);

struct actor_directory_config {
  /// This node's name, and its log.
  std::string node;
  node_log log;
  /// Re-creates an actor lost with its node (this node's), or follows it to where its
  /// owner restarts it (one found by name), off the directory's thread.
  std::function<void(std::shared_ptr<remote_actor_record>)> restart;
  /// Fails over what else was in flight on a lost node; runs once the actors lost with
  /// it restart or are dead, so calls to a restarting actor wait for it.
  std::function<void(const std::string& peer, const std::string& why)> then_lost;
  /// Sends to another node (the owner's answers to numbered saved states).
  std::function<void(const std::string& peer, wire_msg::message)> send;
  /// Passes an answer the directory vouched for (its state kept, or the answer turned
  /// into a refusal) back to the node's owner.
  std::function<void(const std::string& peer, wire_msg::task_result)> vouched;
  /// Stops an actor hosted here that its owner killed.
  std::function<void(detail::actor_record_ptr)> kill;
  /// Where the hosted actors are published; must outlive the directory.
  hosted_table* hosted = nullptr;
};

/// The node's directory of actors across nodes. Of actors on other nodes that its handles
/// use: when a node is lost, those this node created there restart elsewhere while their
/// restarts last and the others are dead, saying why; their saved states (checkpoints)
/// arrive here and go to the record that re-creates them; records go when their last
/// handle does. Of actors hosted here for other nodes: it publishes them in `hosted`.
///   (track_atom, record)                     a handle here to an actor elsewhere
///   (lost_atom, peer, why)                   the connection to `peer` closed
///   (checkpoint_atom, peer, checkpoint)      an actor this node created saved its state;
///                                            a numbered one is answered, taken or not
///                                            (not: that instance was replaced)
///   (checkpoint_atom, peer, task_result)     an answer from `peer` that carries the
///                                            state of an actor this node created:
///                                            kept like a saved state, then the answer
///                                            goes to `vouched`, refused if that
///                                            instance was replaced
///   (moving_atom, peer, ids)                 `peer` stops: the actors this node
///                                            created there as `ids` move, using none
///                                            of their restarts, once it is lost
///   (restart_atom, record)                   a restart found by a call that could not
///                                            reach the actor: it takes the actor's
///                                            state after the states that came before
///   (lookup_atom, peer, request, node, id)   `peer` asks where the actor this node
///                                            created, that was `id` on `node`, lives
///                                            now: answered with an `actor_location`
///                                            (not found, no error: not restarted yet)
///   (taken_atom, answer)                     an owner's answer to a numbered state of
///                                            an actor hosted here: to its host
///   (host_atom, id, record) -> bool          hosts `record` as `id`; answered once
///                                            published, so calls to it find it
///   (unhost_atom, id)                        its owner killed it: it stops
///   (unhost_atom, record)                    it was killed here
///   (fence_atom, why) -> uint64_t            the head found this node dead, `why`: the
///                                            actors hosted for other nodes (restarted
///                                            elsewhere by them) stop; how many did
///   (count_atom) -> uint64_t                 records of actors elsewhere kept
using actor_directory_actor = caf::typed_actor<
    caf::reacts_to<track_atom, std::shared_ptr<remote_actor_record>>,
    caf::reacts_to<lost_atom, std::string, std::string>,
    caf::reacts_to<checkpoint_atom, std::string, wire_msg::actor_checkpoint>,
    caf::reacts_to<checkpoint_atom, std::string, wire_msg::task_result>,
    caf::reacts_to<moving_atom, std::string, std::vector<uint64_t>>,
    caf::reacts_to<restart_atom, std::shared_ptr<remote_actor_record>>,
    caf::reacts_to<lookup_atom, std::string, uint64_t, std::string, uint64_t>,
    caf::reacts_to<taken_atom, wire_msg::actor_checkpoint_taken>,
    caf::replies_to<host_atom, uint64_t, detail::actor_record_ptr>::with<bool>,
    caf::reacts_to<unhost_atom, uint64_t>,
    caf::reacts_to<unhost_atom, detail::actor_record_ptr>,
    caf::replies_to<fence_atom, std::string>::with<uint64_t>,
    caf::replies_to<count_atom>::with<uint64_t>>;

/// Spawns the directory; `detached`: on a thread of its own (tests run it on the test
/// coordinator).
actor_directory_actor spawn_actor_directory(caf::actor_system& sys,
                                            actor_directory_config cfg,
                                            bool detached = true);

/// Routes what the directory handles into its mailbox: states saved by actors this
/// node owns, the owners' answers to them, moves of actors this node owns off a node
/// that stops, and kills of actors hosted here.
void add_directory_routes(wire_routes& routes, const actor_directory_actor& directory);

} // namespace swarm::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<swarm::actors::remote_actor_record>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::wire_msg::actor_checkpoint)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::wire_msg::actor_checkpoint_taken)
