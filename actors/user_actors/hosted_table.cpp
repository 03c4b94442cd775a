#include "actors/user_actors/hosted_table.hpp"

namespace swarm::actors {

hosted_table::hosted_table() {
  for (auto& s : shards_)
    s = std::make_shared<const shard>();
}

std::shared_ptr<const hosted_table::shard> hosted_table::get(size_t i) const {
  return std::atomic_load(&shards_[i]);
}

void hosted_table::set(size_t i, shard s) {
  std::atomic_store(&shards_[i], std::shared_ptr<const shard>{
                                     std::make_shared<const shard>(std::move(s))});
}

detail::actor_record_ptr hosted_table::find(uint64_t id) const {
  auto s = get(id % shards);
  auto i = s->find(id);
  return i == s->end() ? nullptr : i->second;
}

std::optional<uint64_t> hosted_table::id_of(const detail::actor_record* rec) const {
  std::lock_guard<std::mutex> guard{write_};
  auto i = ids_.find(rec);
  if (i == ids_.end()) return std::nullopt;
  return i->second;
}

uint64_t hosted_table::share(const detail::actor_record_ptr& rec,
                             const std::function<uint64_t()>& fresh) {
  std::lock_guard<std::mutex> guard{write_};
  if (auto i = ids_.find(rec.get()); i != ids_.end()) return i->second;
  auto id = fresh();
  put_locked(id, rec);
  return id;
}

void hosted_table::put(uint64_t id, detail::actor_record_ptr rec) {
  std::lock_guard<std::mutex> guard{write_};
  put_locked(id, std::move(rec));
}

void hosted_table::put_locked(uint64_t id, detail::actor_record_ptr rec) {
  ids_[rec.get()] = id;
  auto s = *get(id % shards);
  s[id] = std::move(rec);
  set(id % shards, std::move(s));
}

detail::actor_record_ptr hosted_table::erase(uint64_t id) {
  std::lock_guard<std::mutex> guard{write_};
  return erase_locked(id);
}

detail::actor_record_ptr hosted_table::erase_locked(uint64_t id) {
  auto s = *get(id % shards);
  auto i = s.find(id);
  if (i == s.end()) return nullptr;
  auto rec = std::move(i->second);
  s.erase(i);
  set(id % shards, std::move(s));
  if (auto j = ids_.find(rec.get()); j != ids_.end() && j->second == id) ids_.erase(j);
  return rec;
}

void hosted_table::erase(const detail::actor_record* rec) {
  std::lock_guard<std::mutex> guard{write_};
  if (auto i = ids_.find(rec); i != ids_.end()) erase_locked(i->second);
}

std::vector<detail::actor_record_ptr>
hosted_table::move_out_if(const std::function<bool(const detail::actor_record&)>& pred) {
  std::lock_guard<std::mutex> guard{write_};
  std::vector<detail::actor_record_ptr> out;
  for (size_t k = 0; k < shards; ++k) {
    std::vector<uint64_t> ids;
    auto held = get(k);
    for (auto& [id, rec] : *held)
      if (pred(*rec)) ids.push_back(id);
    for (auto id : ids) {
      out.push_back(erase_locked(id));
      if (!moved_.insert(id).second) continue;
      moved_order_.push_back(id);
      if (moved_order_.size() > moved_kept) {
        moved_.erase(moved_order_.front());
        moved_order_.pop_front();
      }
    }
  }
  return out;
}

bool hosted_table::moved(uint64_t id) const {
  std::lock_guard<std::mutex> guard{write_};
  return moved_.count(id) > 0;
}

size_t hosted_table::size() const {
  size_t n = 0;
  for (size_t k = 0; k < shards; ++k)
    if (auto s = get(k)) n += s->size();
  return n;
}

std::vector<detail::actor_record_ptr> hosted_table::all() const {
  std::vector<detail::actor_record_ptr> out;
  for (size_t k = 0; k < shards; ++k)
    if (auto s = get(k))
      for (auto& [id, rec] : *s)
        out.push_back(rec);
  return out;
}

void hosted_table::clear() {
  std::lock_guard<std::mutex> guard{write_};
  ids_.clear();
  for (size_t k = 0; k < shards; ++k)
    set(k, {});
}

} // namespace swarm::actors
