#pragma once

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "actors/common/protocol.hpp"
#include "actors/common/wire_routes.hpp"
#include "actors/control_store/protocol.hpp"
#include "transport/wire_message.hpp"

namespace swarm::actors {

/// The request id `m` carries, if its type has one (creations, names, key-value).
uint64_t* request_id_of(wire_msg::message& m);

/// What the control-store client needs of its node.
struct control_client_config {
  /// This node's name (the driver of its jobs).
  std::string node;
  /// This process's id, written into job rows.
  uint32_t pid = 0;
  /// How long a request waits for its answer.
  std::chrono::milliseconds request_timeout{10'000};
  /// Sends a message to a node (this one included); never blocks.
  std::function<void(const std::string&, wire_msg::message)> send;
  /// Writes a job row into the control store (on the head) or sends it there.
  std::function<void(wire_msg::job_info)> publish;
  /// Wall-clock milliseconds, for job rows (empty: the system clock).
  std::function<uint64_t()> wall_ms;
};

/// The node's client of the cluster's control plane: requests to other nodes that wait
/// for an answer (actor creation, cluster-wide names, the key-value table) and the rows
/// of the jobs of drivers on this node. It owns the table of requests in flight: each
/// gets a fresh id, its answer (from the network) completes it, and one not answered
/// within `request_timeout` fails with `caf::sec::request_timeout`; an answer nobody
/// waits for any more is dropped.
///   (request_atom, node, message) -> message   sends `message` with a fresh id
///   (answer_atom, id, message)                 an answer came from the network
///   (expire_atom, id)                          the actor's own timer
///   (lost_atom, node)                          `node` was found dead: its requests fail
///   (job_atom, id, running)                    a driver's job started or ended
using control_client_actor =
    caf::typed_actor<caf::replies_to<request_atom, std::string,
                                     wire_msg::message>::with<wire_msg::message>,
                     caf::reacts_to<answer_atom, uint64_t, wire_msg::message>,
                     caf::reacts_to<expire_atom, uint64_t>,
                     caf::reacts_to<lost_atom, std::string>,
                     caf::reacts_to<job_atom, uint64_t, bool>>;

/// Spawns the control-store client; `detached`: on a thread of its own (tests run it on
/// the test coordinator).
control_client_actor spawn_control_client(caf::actor_system& sys, control_client_config cfg,
                                          bool detached = true);

/// Routes the answers to this node's requests (actor creations and lookups, placement
/// groups, key-value operations) into the client's mailbox, by their request ids.
void add_answer_routes(wire_routes& routes, const control_client_actor& control);

} // namespace swarm::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::wire_msg::message)
