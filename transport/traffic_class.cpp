#include "transport/traffic_class.hpp"

#include <linux/pkt_sched.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <sys/socket.h>

namespace swarm {

int dscp_of(traffic_class c) noexcept {
  return c == traffic_class::control ? 34 : 10; // AF41, AF11
}

void mark(int fd, traffic_class c) noexcept {
  int tos = dscp_of(c) << 2;
  ::setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos));
  // After IP_TOS, which sets a priority of its own from the TOS.
  int priority = c == traffic_class::control ? TC_PRIO_INTERACTIVE : TC_PRIO_BULK;
  ::setsockopt(fd, SOL_SOCKET, SO_PRIORITY, &priority, sizeof(priority));
}

} // namespace swarm
