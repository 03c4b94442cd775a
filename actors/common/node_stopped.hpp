#pragma once

#include <string>

#include "framework/detail/core.hpp"
#include "base/error.hpp"

namespace swarm::actors {

/// Why task `task` failed: its node `node` stopped before it `what` ("ran", ...).
inline error node_stopped(const detail::core& node, const std::string& task,
                          const std::string& what) {
  return {errc::runtime_stopped,
          "node '" + node.node_name() + "' stopped before task '" + task + "' " + what};
}

} // namespace swarm::actors
