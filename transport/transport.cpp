#include "transport/transport.hpp"

namespace swarm::wire_msg {

transport::~transport() = default;

std::optional<std::chrono::milliseconds> transport::quiet_for(const std::string&) const {
  return std::nullopt;
}

traffic_counters transport::traffic() const {
  return {};
}

} // namespace swarm::wire_msg
