#pragma once

#include <chrono>
#include <string>

#include "framework/cluster_config.hpp"

namespace swarm::actors {

/// What the dashboard shows, as JSON text: the head's node and job tables (with the
/// nodes of `cfg` that never joined), and what each alive node reports within `timeout`:
/// its tasks by function, actors, objects and recent failures. A node that does not
/// answer is shown with the error, not left out.
std::string dashboard_snapshot(const cluster_config& cfg,
                               std::chrono::milliseconds timeout);

} // namespace swarm::actors
