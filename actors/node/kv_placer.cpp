#include "actors/node/kv_placer.hpp"

#include <algorithm>

namespace swarm::actors {

namespace {

bool has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::string names(const std::vector<std::string>& chain) {
  std::string out;
  for (auto& m : chain)
    out += (out.empty() ? "" : " -> ") + m;
  return out.empty() ? "(none)" : out;
}

} // namespace

kv_placer::kv_placer(config cfg) : cfg_(std::move(cfg)) {
  ring_.push_back(cfg_.head);
  for (auto& n : cfg_.nodes)
    if (n != cfg_.head) ring_.push_back(n);
  cfg_.hosts = std::min(std::max<size_t>(cfg_.hosts, 1), ring_.size());
  cfg_.replication = std::max<size_t>(cfg_.replication, 1);
  placement_.chains.resize(cfg_.shards);
  for (uint32_t i = 0; i < cfg_.shards; ++i)
    placement_.chains[i].shard = i;
}

bool kv_placer::update(const std::function<bool(const std::string&)>& alive,
                       uint64_t now_ms,
                       const std::function<bool(const std::string&)>& returning) {
  // An adopted placement's shards leave the head and the nodes that joined empty (they
  // come back to them after, as lost hosts do); any shard leaves a node that joined
  // empty, to the members that still hold it.
  auto live = [&](const std::string& n) {
    if (adopted_ && (n == cfg_.head || has(empty_, n))) return false;
    return n == cfg_.head || alive(n);
  };
  auto kept = [&](const std::string& m) { return live(m) && !has(empty_, m); };
  changes_.clear();
  holding_ = false;
  auto version = std::max(placement_.version + 1, now_ms); // if anything moves
  for (size_t i = 0; i < cfg_.shards; ++i) {
    auto& before = placement_.chains[i].members;
    auto& since = placement_.chains[i].since;
    std::vector<std::string> chain;
    for (auto& m : before)
      if (kept(m)) chain.push_back(m);
    auto& desired = ring_[i % cfg_.hosts];
    if (chain.empty() && returning)
      for (auto& m : before)
        if (returning(m)) chain.push_back(m);
    // No member with a copy is back, but some may be: the shard waits for them, served by
    // none, rather than starting empty elsewhere.
    bool held = !chain.empty() && !kept(chain.front());
    holding_ = holding_ || held;
    if (chain.empty()) {
      // Unplaced, or every member lost: the desired host, else the next live one.
      for (size_t k = 0; k < cfg_.hosts && chain.empty(); ++k)
        if (live(ring_[(i + k) % cfg_.hosts]))
          chain.push_back(ring_[(i + k) % cfg_.hosts]);
      // No host is (a head started again, its hosts not back): the head, which lives.
      if (chain.empty()) chain.push_back(cfg_.head);
    } else if (!held && chain.front() != desired && live(desired)) {
      // Back to its host: a member since the last placement heads it now; another
      // becomes a member first.
      if (auto d = std::find(chain.begin(), chain.end(), desired); d != chain.end()) {
        chain.erase(d);
        chain.insert(chain.begin(), desired);
      } else {
        chain.push_back(desired);
      }
    }
    auto at = std::find(ring_.begin(), ring_.end(), chain.front()) - ring_.begin();
    for (size_t k = 1; !held && k < ring_.size() && chain.size() < cfg_.replication;
         ++k) {
      auto& n = ring_[(static_cast<size_t>(at) + k) % ring_.size()];
      if (live(n) && !has(chain, n)) chain.push_back(n);
    }
    // Over the replication, the last members go; never the head nor the member after it
    // (the copy a new head recovers from) nor the host becoming a member.
    for (size_t k = chain.size(); chain.size() > cfg_.replication && k-- > 2;)
      if (chain[k] != desired)
        chain.erase(chain.begin() + static_cast<std::ptrdiff_t>(k));
    if (chain != before) {
      changes_.push_back("shard " + std::to_string(i) + ": " + names(before) + " => " +
                         names(chain));
      // A member kept (or waited for) stays one since when it was; a new one, or one
      // back without its copy, is since now (since the start when the table was never
      // placed: there was nothing to miss).
      std::vector<uint64_t> next;
      for (auto& m : chain) {
        auto k = static_cast<size_t>(std::find(before.begin(), before.end(), m) -
                                     before.begin());
        next.push_back(k < since.size() && (held || kept(m)) ? since[k]
                       : placement_.version == 0             ? 0
                                                             : version);
      }
      before = std::move(chain);
      since = std::move(next);
    }
  }
  adopted_ = false; // placed as lost once: they come back at the next update
  empty_.clear();
  if (changes_.empty()) return false;
  placement_.version = version;
  return true;
}

bool kv_placer::adopt(const wire_msg::kv_placement& p) {
  if (p.version <= placement_.version || p.chains.size() != cfg_.shards) return false;
  for (size_t i = 0; i < p.chains.size(); ++i)
    if (p.chains[i].shard != i) return false; // another cluster's shape
  placement_ = p;
  adopted_ = true;
  return true;
}

void kv_placer::joined_empty(const std::string& n) {
  if (!has(empty_, n)) empty_.push_back(n);
}

} // namespace swarm::actors
