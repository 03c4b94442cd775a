#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "actors/objects/protocol.hpp"

namespace swarm::actors {

/// Results handed over when a node stops (`ObjectsHandOver`), on both sides; owned by the
/// object manager, on its thread.
///
/// The node that stops hands each owner the results it holds for it: the owner's own
/// copies are their primaries from then on, and the node waits (bounded) for each owner
/// to answer. An owner answers for a result at once, or, while it still pulls its copy
/// from that node, once the pull ended: so a node drained in the middle of a pull lets it
/// finish, and its task does not run again.
class hand_over_table {
public:
  // The stopping node's side.

  /// Hands over `by_owner`'s results (what to send each owner is the caller's).
  void start(const std::map<std::string, std::vector<object_key>>& by_owner);
  /// Owner `peer` answered for `keys`.
  void taken(const std::string& peer, const std::vector<object_key>& keys);
  /// Whether every owner answered for every result (true before `start`).
  bool done() const { return waiting_.empty(); }
  /// Results handed over and answered for.
  uint64_t handed() const { return handed_; }

  // The owner's side.

  /// `peer`, which stops, waits for this node's pull of `k` to end.
  void await_pull(const object_key& k, const std::string& peer);
  /// The pull of `k` ended: the nodes that wait for it, to answer.
  std::vector<std::string> pull_ended(const object_key& k);

  /// `peer` is gone: it answers nothing more, nor waits.
  void lost(const std::string& peer);

private:
  std::map<std::string, std::set<object_key>> waiting_; // owners yet to answer, for what
  uint64_t handed_ = 0;
  std::map<object_key, std::vector<std::string>> pulls_awaited_;
};

} // namespace swarm::actors
