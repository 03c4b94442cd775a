#pragma once

#include <map>
#include <set>
#include <string>

#include "transport/wire_message.hpp"

namespace swarm::actors {

/// The head's index of what the nodes registered: for each function and actor type, the
/// signatures it has and the nodes that registered it under each. A joining node is
/// checked against it in time that grows with what the node registered, not with the
/// size of the cluster.
class signature_index {
public:
  /// Adds what `n` registered (it replaces what a node of that name had).
  void add(const wire_msg::node_info& n);
  /// Removes what the node `name` registered.
  void remove(const std::string& name);
  /// Why `n` cannot join: a function or actor type it registered under another
  /// signature than another node has it, naming both; empty if none.
  std::string conflict(const wire_msg::node_info& n) const;

private:
  // (actor type?, name) -> signature -> nodes
  using key = std::pair<bool, std::string>;
  std::map<key, std::map<std::string, std::set<std::string>>> by_name_;
  // node -> what it registered
  std::map<std::string, std::set<std::pair<key, std::string>>> of_node_;
};

} // namespace swarm::actors
