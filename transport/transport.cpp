#include "transport/transport.hpp"

namespace swarm::wire_msg {

transport::~transport() = default;

} // namespace swarm::wire_msg
