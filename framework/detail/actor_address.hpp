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
};

template <class Inspector> bool inspect(Inspector& f, actor_address& x) {
  return f(x.node, x.id, x.type_name);
}

} // namespace swarm::detail
