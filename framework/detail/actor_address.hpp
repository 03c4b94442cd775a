#pragma once

#include <cstdint>
#include <string>

namespace swarm::detail {

/// Where an actor is reached from any node of the cluster: what an actor handle becomes
/// when it travels in a value.
struct actor_address {
  /// The node it lives on.
  std::string node;
  /// Its id there, among the actors that node hosts for others.
  uint64_t id = 0;
  /// Its registered type name.
  std::string type_name;
  /// Its name in the cluster, when it has one: a handle made from the address follows
  /// the actor by it when its node is lost, as one found by name does.
  std::string name;
  /// How often a call lost with the actor's node is sent again (its options').
  uint32_t max_task_retries = 0;
  /// The node that created it (empty: not known). A handle made from the address of an
  /// actor without a name follows it by asking that node, which restarts it, where it
  /// lives now.
  std::string owner;
};

template <class Inspector> bool inspect(Inspector& f, actor_address& x) {
  return f(x.node, x.id, x.type_name, x.name, x.max_task_retries, x.owner);
}

} // namespace swarm::detail
