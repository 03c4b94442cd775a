#pragma once

// The user-actor subsystem's messages: calls into an actor host and its turns.

#include <caf/atom.hpp>

#include "actors/common/protocol.hpp"

namespace swarm::actors {

using call_atom = caf::atom_constant<caf::atom("call")>;
using resume_atom = caf::atom_constant<caf::atom("resume")>;
using next_atom = caf::atom_constant<caf::atom("next")>;
using end_atom = caf::atom_constant<caf::atom("hostend")>;
/// The owner's answer to a numbered saved state (`actor_spec::on_checkpoint`), and the
/// host's turn to send an unanswered one again.
using taken_atom = caf::atom_constant<caf::atom("cptaken")>;
using resend_atom = caf::atom_constant<caf::atom("cpresend")>;

using track_atom = caf::atom_constant<caf::atom("track")>;
using checkpoint_atom = caf::atom_constant<caf::atom("checkpoint")>;
using host_atom = caf::atom_constant<caf::atom("host")>;
using unhost_atom = caf::atom_constant<caf::atom("unhost")>;
using fence_atom = caf::atom_constant<caf::atom("fence")>;
using moving_atom = caf::atom_constant<caf::atom("moving")>;
using restart_atom = caf::atom_constant<caf::atom("restart")>;

} // namespace swarm::actors
