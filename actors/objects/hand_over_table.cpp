#include "actors/objects/hand_over_table.hpp"

#include <algorithm>

namespace swarm::actors {

void hand_over_table::start(
    const std::map<std::string, std::vector<object_key>>& by_owner) {
  for (auto& [owner, keys] : by_owner)
    waiting_[owner].insert(keys.begin(), keys.end());
}

void hand_over_table::taken(const std::string& peer,
                            const std::vector<object_key>& keys) {
  auto i = waiting_.find(peer);
  if (i == waiting_.end()) return;
  for (auto& k : keys)
    handed_ += i->second.erase(k);
  if (i->second.empty()) waiting_.erase(i);
}

void hand_over_table::await_pull(const object_key& k, const std::string& peer) {
  auto& peers = pulls_awaited_[k];
  if (std::find(peers.begin(), peers.end(), peer) == peers.end()) peers.push_back(peer);
}

std::vector<std::string> hand_over_table::pull_ended(const object_key& k) {
  auto i = pulls_awaited_.find(k);
  if (i == pulls_awaited_.end()) return {};
  auto peers = std::move(i->second);
  pulls_awaited_.erase(i);
  return peers;
}

void hand_over_table::lost(const std::string& peer) {
  waiting_.erase(peer);
  for (auto i = pulls_awaited_.begin(); i != pulls_awaited_.end();) {
    auto& peers = i->second;
    peers.erase(std::remove(peers.begin(), peers.end(), peer), peers.end());
    i = peers.empty() ? pulls_awaited_.erase(i) : std::next(i);
  }
}

} // namespace swarm::actors
