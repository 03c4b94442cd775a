#include "actors/node/signature_index.hpp"

namespace swarm::actors {

void signature_index::add(const wire_msg::node_info& n) {
  remove(n.name);
  auto& mine = of_node_[n.name];
  auto put = [&](bool actor, const std::vector<wire_msg::capability>& list) {
    for (auto& c : list) {
      key k{actor, c.name};
      by_name_[k][c.signature].insert(n.name);
      mine.emplace(std::move(k), c.signature);
    }
  };
  put(false, n.functions);
  put(true, n.actor_types);
}

void signature_index::remove(const std::string& name) {
  auto i = of_node_.find(name);
  if (i == of_node_.end()) return;
  for (auto& [k, signature] : i->second) {
    auto by = by_name_.find(k);
    if (by == by_name_.end()) continue;
    auto s = by->second.find(signature);
    if (s != by->second.end()) {
      s->second.erase(name);
      if (s->second.empty()) by->second.erase(s);
    }
    if (by->second.empty()) by_name_.erase(by);
  }
  of_node_.erase(i);
}

std::string signature_index::conflict(const wire_msg::node_info& n) const {
  auto check = [&](bool actor,
                   const std::vector<wire_msg::capability>& list) -> std::string {
    for (auto& c : list) {
      auto by = by_name_.find({actor, c.name});
      if (by == by_name_.end()) continue;
      for (auto& [signature, nodes] : by->second) {
        if (signature == c.signature) continue;
        for (auto& other : nodes)
          if (other != n.name)
            return std::string{actor ? "actor type" : "function"} + " '" + c.name +
                   "' is " + c.signature + " on node '" + n.name + "' but " + signature +
                   " on node '" + other + "'";
      }
    }
    return {};
  };
  if (auto why = check(false, n.functions); !why.empty()) return why;
  return check(true, n.actor_types);
}

} // namespace swarm::actors
