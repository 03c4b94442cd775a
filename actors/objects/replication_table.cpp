#include "actors/objects/replication_table.hpp"

#include <algorithm>

namespace swarm::actors {

void replication_table::start(const key& object, uint64_t size, uint32_t copies,
                              done_fn done, std::string avoid) {
  auto& e = table_[object];
  e.want = std::max(e.want, copies);
  e.size = size;
  e.avoid = std::move(avoid);
  if (done) e.done.push_back(std::move(done));
  top_up(object, e);
}

void replication_table::top_up(const key& object, entry& e) {
  auto asked = e.kept.size() + e.pending.size();
  if (asked < e.want && cfg_.pick) {
    auto exclude = e.kept;
    exclude.insert(e.pending.begin(), e.pending.end());
    exclude.insert(e.refused.begin(), e.refused.end());
    auto chosen = cfg_.pick(e.want - asked, exclude);
    if (!e.avoid.empty() &&
        std::find(chosen.begin(), chosen.end(), e.avoid) != chosen.end()) {
      exclude.insert(e.avoid);
      auto others = cfg_.pick(e.want - asked, exclude);
      if (others.size() == chosen.size()) chosen = std::move(others);
    }
    for (auto& n : chosen) {
      // Pulled from here and from the replicas kept already.
      wire_msg::remote_ref ref{{object.first, object.second},
                               cfg_.node,
                               e.size,
                               {e.kept.begin(), e.kept.end()}};
      e.pending.insert(n);
      cfg_.send(n, wire_msg::object_replicate{std::move(ref)});
    }
  }
  if (!e.pending.empty() || e.done.empty()) return;
  auto done = std::move(e.done);
  e.done.clear();
  std::vector<std::string> kept(e.kept.begin(), e.kept.end());
  for (auto& d : done)
    d(kept);
}

void replication_table::answered(const std::string& peer, const key& object,
                                 const std::string& error) {
  auto i = table_.find(object);
  if (i == table_.end()) {
    if (error.empty())
      cfg_.send(peer, wire_msg::object_free{{object.first, object.second}});
    return;
  }
  auto& e = i->second;
  if (!e.pending.erase(peer)) return;
  (error.empty() ? e.kept : e.refused).insert(peer);
  top_up(object, e);
}

void replication_table::lost(const std::string& peer) {
  for (auto& [object, e] : table_)
    if (e.kept.erase(peer) + e.pending.erase(peer) > 0) {
      e.refused.insert(peer);
      top_up(object, e);
    }
}

void replication_table::drop(const key& object) {
  auto i = table_.find(object);
  if (i == table_.end()) return;
  for (auto& n : i->second.kept)
    cfg_.send(n, wire_msg::object_free{{object.first, object.second}});
  for (auto& n : i->second.pending)
    cfg_.send(n, wire_msg::object_free{{object.first, object.second}});
  table_.erase(i);
}

} // namespace swarm::actors
