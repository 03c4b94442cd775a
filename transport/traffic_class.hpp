#pragma once

namespace swarm {

/// The two kinds of connection between nodes, as a network's queues should treat them.
enum class traffic_class {
  /// Control messages, calls and small results: latency first.
  control,
  /// Object transfers: bandwidth, below control traffic.
  bulk,
};

/// Marks a connected TCP socket with its class, for the queues of the host and of a real
/// network: DSCP AF41 and `SO_PRIORITY` 6 (interactive) for control, DSCP AF11 and
/// `SO_PRIORITY` 2 (bulk) for bulk. Best effort: a mark the system refuses is left out.
void mark(int fd, traffic_class c) noexcept;

/// The DSCP value `mark` gives class `c` (the upper six bits of the IP TOS byte).
int dscp_of(traffic_class c) noexcept;

} // namespace swarm
