#pragma once

#include "actors/common/wire_routes.hpp"
#include "actors/ownership/owner.hpp"
#include "actors/ownership/stream_sender.hpp"

namespace swarm::actors {

/// Routes what owners handle: results, stream items and placements of the work they own
/// and the borrower protocol go to the owner, run on the reading thread when it is idle
/// (`owner_ref`); a reader's progress through a stream goes to the stream senders'
/// mailbox.
void add_owner_routes(wire_routes& routes, const owner_ref& owner,
                      const stream_senders_actor& streams);

} // namespace swarm::actors
