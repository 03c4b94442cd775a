#pragma once

// The deterministic simulation of the cluster's membership protocol: the membership
// actors of a head and five workers, the last joined by address outside the cluster
// file (the code a node runs, with a port that stands for the node around it) on one CAF
// test coordinator, in virtual time, over a simulated network of connections (in order on
// each, a reset or timeout closes both ends) under a schedule of faults drawn from a
// seed. Every message is really encoded and decoded. Nothing in a run reads a real clock
// or depends on threads, so a seed replays the same run, event for event (`fingerprint`).

#include <cstdint>
#include <string>
#include <vector>

namespace swarm::sim {

/// One run of the membership protocol under a seed's faults.
struct membership_run {
  std::vector<std::string> faults;     // as drawn, in the order they begin
  std::vector<std::string> violations; // the invariants broken, each with when and where
  std::vector<std::string> trace;      // every event, when asked for
  uint64_t fingerprint = 0;            // of every event: equal runs, equal fingerprints
  uint64_t deliveries = 0;             // messages delivered
  uint64_t verdicts = 0;               // nodes the head found dead
  uint64_t writes = 0;                 // the driver's key-value writes
  uint64_t acknowledged = 0;           // ... of which acknowledged
  uint64_t lost_reported = 0; // acknowledged, then lost, the loss reported by a node
  uint64_t alarms = 0;        // a node said writes may be lost (with or without a loss)
  uint64_t shard_copies = 0;  // whole key-value shards a chain member received
  double simulated_s = 0;   // virtual time the run covered
};

/// What a run simulates beyond its seed's faults on the workers.
struct membership_options {
  /// Members of each key-value chain (`gcs_replication`, 2 to 5: the nodes of the
  /// cluster file).
  uint32_t replication = 2;
  /// Whether the head is killed once as well (it starts again as a new life, with no
  /// control-store disk, and its driver's requests in flight are lost with it).
  bool head_kills = false;
};

/// Runs the protocol under `seed`'s faults and checks, as the run goes and at its end:
///   - a life the head found dead is never alive in its table again (fencing);
///   - the head finds no node dead that no fault touched (no false verdicts);
///   - once the faults heal, every node is alive in every table, each with its running
///     life, and every node holds the head's key-value placement (convergence);
///   - every key-value write acknowledged to the driver (on the head) reads back as
///     written afterwards, from the node serving its key by then, or its loss was
///     reported: a shard promoted with no copy as new as its chain's says writes may be
///     lost (every node holding it lost at once: `lost_reported`);
///   - no node is told to stop.
membership_run run_membership(unsigned seed, bool keep_trace,
                              const membership_options& options = {});

} // namespace swarm::sim
