#include "framework/detail/value_pool.hpp"

#include <vector>

namespace swarm::detail {

void* take_from(value_pool& pool, const type_descriptor& type, size_t bytes) {
  return bytes >= pool.min_bytes() ? pool.take(type, bytes) : nullptr;
}

std::shared_ptr<void> adopt_into(value_pool& pool, void* value,
                                 const type_descriptor& type) {
  return pool.adopt(value, type);
}

value_pool::value_pool(size_t max_bytes, size_t min_bytes)
    : max_bytes_(max_bytes), min_bytes_(min_bytes) {}

value_pool::~value_pool() {
  for (auto& k : kept_)
    destroy(k);
}

void* value_pool::take(const type_descriptor& type, size_t bytes) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto best = kept_.end();
  for (auto i = kept_.begin(); i != kept_.end(); ++i)
    if (same_type(*i->type, type) && i->bytes >= bytes && i->bytes <= bytes + bytes / 4 &&
        (best == kept_.end() || i->bytes < best->bytes))
      best = i;
  if (best == kept_.end()) return nullptr;
  void* v = best->value;
  bytes_ -= best->bytes;
  ++reused_;
  kept_.erase(best);
  return v;
}

std::shared_ptr<void> value_pool::adopt(void* value, const type_descriptor& type) {
  // On a throw, shared_ptr hands `value` to the deleter itself.
  return {value, [pool = weak_from_this(), t = &type](void* v) {
            if (auto alive = pool.lock())
              alive->give(*t, v);
            else
              t->destroy(v);
          }};
}

void value_pool::give(const type_descriptor& type, void* value) {
  // Runs in a deleter: nothing here may throw.
  kept k{&type, value, type.byte_size(value)};
  bool keep = k.bytes >= min_bytes_ && k.bytes <= max_bytes_;
  while (keep) {
    kept oldest{};
    {
      std::lock_guard<std::mutex> guard{mtx_};
      if (bytes_ + k.bytes <= max_bytes_) {
        try {
          kept_.push_back(k);
        } catch (...) {
          break;
        }
        bytes_ += k.bytes;
        return;
      }
      oldest = kept_.front();
      bytes_ -= oldest.bytes;
      kept_.pop_front();
    }
    destroy(oldest); // outside the lock: freeing memory takes a while
  }
  destroy(k);
}

size_t value_pool::shed(size_t bytes) {
  std::vector<kept> drop;
  size_t freed = 0;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    while (freed < bytes && !kept_.empty()) {
      freed += kept_.front().bytes;
      drop.push_back(kept_.front());
      kept_.pop_front();
    }
    bytes_ -= freed;
  }
  for (auto& d : drop)
    destroy(d);
  return freed;
}

value_pool_stats value_pool::stats() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return {kept_.size(), bytes_, reused_};
}

} // namespace swarm::detail
