#pragma once

#include <caf/allowed_unsafe_message_type.hpp>

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "framework/resources.hpp"

namespace swarm::actors {

/// Work that waits for a node the autoscaler may start: what one piece demands, and,
/// for the bundles of a strict_spread placement group, the group, whose bundles never
/// share a node. (A strict_pack group waits as one demand, its bundles summed.)
struct waiting_demand {
  resource_set demand;
  std::optional<uint64_t> apart; ///< the strict_spread group it is a bundle of

  waiting_demand(resource_set d, std::optional<uint64_t> group = std::nullopt)
      : demand(std::move(d)), apart(group) {}

  bool operator==(const waiting_demand& o) const {
    return demand == o.demand && apart == o.apart;
  }
};

} // namespace swarm::actors

// Only sent within a node (the global scheduler answers the autoscaler).
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<swarm::actors::waiting_demand>)
