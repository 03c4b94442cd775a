#include "actors/objects/pulled_copies.hpp"

#include <algorithm>
#include <iterator>

namespace swarm::actors {

void pulled_copies::remember(const object_key& k, const std::shared_ptr<const void>& v,
                             const detail::type_descriptor* type) {
  if (fetched_.size() >= prune_fetched_at_) {
    for (auto i = fetched_.begin(); i != fetched_.end();)
      i = i->second.first.expired() ? fetched_.erase(i) : std::next(i);
    prune_fetched_at_ = std::max<size_t>(64, 2 * fetched_.size());
  }
  fetched_[k] = {v, type};
}

void pulled_copies::keep(const object_key& k, std::shared_ptr<const void> v,
                         const detail::type_descriptor* type, uint64_t bytes) {
  if (kept_index_.count(k)) return;
  auto copy = std::make_shared<cached_copy>(std::move(v), bytes);
  if (cache_) cache_(copy);
  kept_.emplace_front(k, kept_copy{std::move(copy), type, bytes});
  kept_index_[k] = kept_.begin();
  kept_bytes_ += bytes;
  while (kept_bytes_ > budget_)
    drop_least_recent();
}

pulled_copy pulled_copies::remembered(const object_key& k) const {
  auto f = fetched_.find(k);
  if (f == fetched_.end()) return {};
  return {f->second.first.lock(), f->second.second};
}

pulled_copy pulled_copies::kept(const object_key& k) const {
  auto i = kept_index_.find(k);
  if (i == kept_index_.end()) return {};
  return {i->second->second.value->peek(), i->second->second.type};
}

std::shared_ptr<const void>
pulled_copies::read_kept(const object_key& k, const detail::type_descriptor* type) {
  auto i = kept_index_.find(k);
  if (i == kept_index_.end() || !detail::same_type(*i->second->second.type, *type))
    return nullptr;
  auto v = i->second->second.value->get();
  if (!v) { // the store evicted it
    drop_kept(k);
    return nullptr;
  }
  kept_.splice(kept_.begin(), kept_, i->second);
  return v;
}

bool pulled_copies::drop_least_recent() {
  if (kept_.empty()) return false;
  auto& [old, copy] = kept_.back();
  kept_bytes_ -= copy.bytes;
  if (auto v = copy.value->peek()) remember(old, v, copy.type);
  kept_index_.erase(old);
  kept_.pop_back();
  return true;
}

void pulled_copies::drop_kept(const object_key& k) {
  auto i = kept_index_.find(k);
  if (i == kept_index_.end()) return;
  kept_bytes_ -= i->second->second.bytes;
  kept_.erase(i->second);
  kept_index_.erase(i);
}

} // namespace swarm::actors
