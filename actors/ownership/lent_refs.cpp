#include "actors/ownership/lent_refs.hpp"

#include "framework/detail/wire_convert.hpp"

namespace swarm::actors {

void lent_refs::add(const detail::slot_ptr& slot) {
  auto k = detail::key_of(slot->id());
  std::lock_guard<std::mutex> guard{mtx_};
  auto& entry = slots_[k];
  if (!entry.expired()) return;
  entry = slot;
  if (slots_.size() < sweep_at_) return;
  for (auto i = slots_.begin(); i != slots_.end();)
    i = i->second.expired() ? slots_.erase(i) : std::next(i);
  sweep_at_ = std::max<size_t>(64, 2 * slots_.size());
}

detail::slot_ptr lent_refs::find(const object_key& k) const {
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = slots_.find(k);
  return i == slots_.end() ? nullptr : i->second.lock();
}

size_t lent_refs::size() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return slots_.size();
}

} // namespace swarm::actors
