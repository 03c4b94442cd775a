#pragma once

#include "actors/common/wire_routes.hpp"
#include "actors/objects/object_manager.hpp"

namespace swarm::actors {

/// Routes what the object manager handles into its mailbox: pulls of objects held here
/// and the chunks that answer them, frees, and replicas asked and answered.
void add_object_routes(wire_routes& routes, const object_manager_actor& objects);

} // namespace swarm::actors
