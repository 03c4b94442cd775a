#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "transport/wire_message.hpp"

namespace swarm::actors {

/// The head's placement of the key-value table's shards on several nodes
/// (cluster.gcs_hosts > 1). The hosts are the head, then the file's nodes in order: the
/// first `hosts` serve shards, shard i on host i mod `hosts`, each shard with its own
/// chain of `replication` nodes (the next live nodes after its primary). A shard stays on
/// its primary while it lives: a lost (or leaving) primary's shard goes to the next live
/// member of its chain, which holds its rows. A host that comes back (or joins late)
/// first becomes a member of its shards' chains, and heads them at the next placement
/// (the shard moves back to it, its old primary staying a member). Each chain says since
/// when each member is in it without a break (`shard_chain::since`): a node cannot tell
/// alone whether it missed a placement that dropped it.
class kv_placer {
public:
  struct config {
    /// The cluster file's nodes, in its order (clients are not among them).
    std::vector<std::string> nodes;
    std::string head;
    size_t hosts = 1;
    size_t replication = 1;
    size_t shards = 1;
  };

  explicit kv_placer(config cfg);

  /// Whether the key-value table is spread at all (`hosts` > 1).
  bool enabled() const { return cfg_.hosts > 1; }

  /// Places the shards again, given which nodes are alive (the head always is); whether
  /// anything moved (the placement then has a later version, later also than any of an
  /// earlier life of this head: `now_ms` is the wall clock). A shard none of whose
  /// members with a copy is alive waits for those `returning` says may come back with
  /// it (a head started again, its nodes not back yet): its chain keeps only them and
  /// no node serves it meanwhile; else it starts empty on live nodes.
  bool update(const std::function<bool(const std::string&)>& alive, uint64_t now_ms,
              const std::function<bool(const std::string&)>& returning = {});

  /// Whether the last update left a shard waiting for members that may come back.
  bool holding() const { return holding_; }

  const wire_msg::kv_placement& placement() const { return placement_; }

  /// A head started again takes `p`, the placement a node of its cluster holds, when it
  /// is newer than its own (it has none before it first places): each shard stays where
  /// its copies are. Its own copies died with its earlier life, so the next update
  /// places its shards as a lost host's (on the next members of their chains), and it
  /// comes back as any host does: a member first, then their primary. Whether it took
  /// `p`.
  bool adopt(const wire_msg::kv_placement& p);

  /// Node `n` joined holding no placement: a new process, whose copies (if it held any)
  /// died with its earlier one. At the next update it leaves the chains it was in, and
  /// any it is placed in again it is a member of since then; at the first update after
  /// the head adopted a placement it counts as lost, as the head does.
  void joined_empty(const std::string& n);

  /// What the last update changed, one line per shard ("shard 3: worker-1 -> worker-2").
  const std::vector<std::string>& changes() const { return changes_; }

private:
  config cfg_;
  // The head, then the file's other nodes in order.
  std::vector<std::string> ring_;
  wire_msg::kv_placement placement_;
  std::vector<std::string> changes_;
  // Since the last update: the nodes that joined holding no placement (they keep no
  // copies), and whether this head adopted a placement (the head then counts as lost).
  std::vector<std::string> empty_;
  bool adopted_ = false;
  bool holding_ = false; // see `holding`
};

} // namespace swarm::actors
