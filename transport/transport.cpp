#include "transport/transport.hpp"

namespace swarm::wire_msg {

transport::~transport() = default;

std::optional<std::chrono::milliseconds> transport::quiet_for(const std::string&) const {
  return std::nullopt;
}

std::vector<std::string> transport::send_all(const std::vector<std::string>& peers,
                                             const message& m) {
  std::vector<std::string> missed;
  for (auto& p : peers)
    if (!send(p, m)) missed.push_back(p);
  return missed;
}

traffic_counters transport::traffic() const {
  return {};
}

uint16_t transport::listening_port() const {
  return 0;
}

} // namespace swarm::wire_msg
