#pragma once

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "actors/object_manager.hpp"
#include "actors/remote_actor_record.hpp"

namespace swarm::actors {

using track_atom = caf::atom_constant<caf::atom("track")>;
using checkpoint_atom = caf::atom_constant<caf::atom("checkpoint")>;

/// Starts restarting `r`, lost with its node `peer`, when restarts remain; logs it as
/// node `self` saw it. False when its restarts are used up (or it is not this node's).
bool begin_restart(const std::string& self, remote_actor_record& r, const std::string& peer,
                   const std::string& why);

struct actor_directory_config {
  /// This node's name, for its log.
  std::string node;
  /// Re-creates an actor lost with its node, off the directory's thread.
  std::function<void(std::shared_ptr<remote_actor_record>)> restart;
  /// Fails over what else was in flight on a lost node; runs once the actors lost with
  /// it restart or are dead, so calls to a restarting actor wait for it.
  std::function<void(const std::string& peer, const std::string& why)> then_lost;
};

/// The node's directory of actors on other nodes that its handles use. When a node is
/// lost, the actors this node created there restart elsewhere while their restarts last
/// and the others are dead, saying why; their saved states (checkpoints) arrive here and
/// go to the record that re-creates them. Records go when their last handle does.
///   (track_atom, record)                     a handle here to an actor elsewhere
///   (lost_atom, peer, why)                   the connection to `peer` closed
///   (checkpoint_atom, peer, checkpoint)      an actor this node created saved its state
///   (count_atom) -> uint64_t                 records kept (for tests and stats)
using actor_directory_actor = caf::typed_actor<
    caf::reacts_to<track_atom, std::shared_ptr<remote_actor_record>>,
    caf::reacts_to<lost_atom, std::string, std::string>,
    caf::reacts_to<checkpoint_atom, std::string, wire_msg::actor_checkpoint>,
    caf::replies_to<count_atom>::with<uint64_t>>;

/// Spawns the directory; `detached`: on a thread of its own (tests run it on the test
/// coordinator).
actor_directory_actor spawn_actor_directory(caf::actor_system& sys,
                                            actor_directory_config cfg, bool detached = true);

} // namespace swarm::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<swarm::actors::remote_actor_record>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::wire_msg::actor_checkpoint)
