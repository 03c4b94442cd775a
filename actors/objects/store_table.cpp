#include "actors/objects/store_table.hpp"

#include <algorithm>
#include <cstdio>

#include "framework/device_buffer.hpp"

namespace swarm::actors {

class table_lease final : public detail::store_lease {
public:
  table_lease(std::shared_ptr<store_table> table, object_id id)
      : table_(std::move(table)), id_(id) {}
  ~table_lease() override { table_->release(id_); }

  void bind(std::weak_ptr<detail::object_slot> slot) override {
    table_->bind(id_, std::move(slot));
  }

  result<detail::restored_value> restore(const detail::type_descriptor& type) override {
    return table_->restore(id_, type);
  }

private:
  std::shared_ptr<store_table> table_;
  object_id id_;
};

class secondary_lease final : public detail::store_lease {
public:
  secondary_lease(std::shared_ptr<store_table> table, size_t bytes)
      : table_(std::move(table)), bytes_(bytes) {}
  ~secondary_lease() override { table_->release_secondary(bytes_); }

private:
  std::shared_ptr<store_table> table_;
  size_t bytes_;
};

namespace {

// The largest and least recently used first: bytes times idle time.
template <class Candidate>
void order_by_value(std::vector<Candidate>& candidates,
                    std::chrono::steady_clock::time_point now) {
  for (auto& c : candidates) {
    std::chrono::duration<double> idle = now - c.last_use;
    c.score = static_cast<double>(c.bytes) * (std::max(idle.count(), 0.0) + 1e-3);
  }
  std::sort(candidates.begin(), candidates.end(),
            [](auto& a, auto& b) { return a.score > b.score; });
}

} // namespace

store_table::store_table(size_t capacity, size_t inline_threshold, size_t pool_bytes,
                         std::optional<spill_config> spill)
    : capacity_(capacity), inline_threshold_(inline_threshold),
      pool_(std::make_shared<detail::value_pool>(
          std::min(pool_bytes, capacity),
          std::max<size_t>(inline_threshold, size_t{1} << 20))) {
  if (spill) files_ = std::make_unique<spill_files>(std::move(*spill));
}

void store_table::make_room(size_t bytes) {
  size_t free = 0;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    free = capacity_ - bytes_;
  }
  auto pooled = pool_->stats().bytes;
  if (bytes <= free && pooled > free - bytes) pool_->shed(pooled - (free - bytes));
}

namespace {

// The host memory a value takes: a device buffer's bytes are in device memory, counted
// by its device's worker (its size still decides how it travels to other nodes).
size_t host_bytes_of(const detail::boxed_value& v) {
  if (detail::same_type(*v.type, detail::type_of<device_buffer>())) {
    auto& b = *static_cast<const device_buffer*>(v.ptr.get());
    return sizeof b + (b.on_device() ? 0 : b.size());
  }
  return v.type->byte_size(v.ptr.get());
}

} // namespace

result<std::unique_ptr<detail::store_lease>>
store_table::admit(const object_id& id, const detail::boxed_value& value) {
  auto bytes = host_bytes_of(value);
  if (bytes < inline_threshold_) return std::unique_ptr<detail::store_lease>{};
  {
    // Made again (a task retried where its first result is still kept): the same
    // object, counted once while either copy lives.
    std::lock_guard<std::mutex> guard{mtx_};
    if (auto i = objects_.find(id); i != objects_.end()) {
      ++i->second.leases;
      return std::unique_ptr<detail::store_lease>{
          std::make_unique<table_lease>(shared_from_this(), id)};
    }
  }
  if (auto ok = fit(id, bytes, "object " + id.to_string() + " (" + value.type->name + ")",
                    fit_mode::primary);
      !ok)
    return ok.err();
  return std::unique_ptr<detail::store_lease>{
      std::make_unique<table_lease>(shared_from_this(), id)};
}

result<void> store_table::fit(const object_id& id, size_t bytes, const std::string& what,
                              fit_mode mode) {
  // Nothing that goes, to disk or anywhere, makes room for more than the whole store.
  if (bytes > capacity_) {
    std::lock_guard<std::mutex> guard{mtx_};
    if (mode != fit_mode::restore) ++rejected_;
    return error{errc::store_full, what + ", " + human_bytes(bytes) +
                                       ", is larger than the whole object store (" +
                                       human_bytes(capacity_) + "): it never fits"};
  }
  std::optional<error> spill_failure;
  for (;;) {
    make_room(bytes);
    {
      std::lock_guard<std::mutex> guard{mtx_};
      if (bytes <= capacity_ - bytes_) {
        switch (mode) {
        case fit_mode::primary:
          if (auto [i, added] = objects_.emplace(id, entry{bytes, {}, true, false, 1});
              !added) {
            ++i->second.leases; // made again meanwhile: counted once
            return {};
          }
          break;
        case fit_mode::secondary:
          secondary_bytes_ += bytes;
          break;
        case fit_mode::restore: {
          auto i = objects_.find(id);
          if (i == objects_.end())
            return error{errc::object_freed, "object " + id.to_string() + " was freed"};
          i->second.in_memory = true;
          --spilled_objects_;
          ++restores_;
        }
        }
        bytes_ += bytes;
        return {};
      }
    }
    if (evict_for(bytes) > 0) continue;
    spilled out;
    if (files_) out = spill_for(bytes);
    if (out.failure) spill_failure = out.failure;
    if (out.bytes > 0) continue;
    std::lock_guard<std::mutex> guard{mtx_};
    if (bytes <= capacity_ - bytes_) continue; // freed meanwhile
    if (mode != fit_mode::restore) ++rejected_; // a read not kept in memory is no refusal
    return full_error(what, bytes, spill_failure);
  }
}

store_table::spilled store_table::spill_for(size_t bytes) {
  struct candidate {
    object_id id;
    size_t bytes;
    std::shared_ptr<detail::object_slot> slot;
    detail::object_slot::clock::time_point last_use;
    double score;
  };
  std::vector<candidate> candidates;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    for (auto& [id, e] : objects_)
      if (e.in_memory)
        if (auto s = e.slot.lock())
          candidates.push_back({id, e.bytes, std::move(s), {}, 0});
  }
  for (auto& c : candidates)
    c.last_use = c.slot->last_use();
  order_by_value(candidates, detail::object_slot::clock::now());
  spilled out;
  for (auto& c : candidates) {
    bool had_file = false;
    {
      std::lock_guard<std::mutex> guard{mtx_};
      if (bytes <= capacity_ - bytes_) break;
      auto i = objects_.find(c.id);
      if (i == objects_.end() || !i->second.in_memory) continue;
      had_file = i->second.on_disk;
    }
    auto done = c.slot->spill([&](const detail::boxed_value& v) -> result<void> {
      if (had_file) return {}; // written at an earlier spill, and unchanged since
      return files_->write(c.id, v);
    });
    if (!done) {
      out.failure = done.err();
      continue;
    }
    if (!*done) continue; // in use
    bool gone = false;
    {
      std::lock_guard<std::mutex> guard{mtx_};
      auto i = objects_.find(c.id);
      gone = i == objects_.end();
      if (!gone && i->second.in_memory) {
        i->second.in_memory = false;
        i->second.on_disk = true;
        bytes_ -= i->second.bytes;
        ++spilled_objects_;
        ++spills_;
        out.bytes += i->second.bytes;
      }
    }
    if (gone) files_->remove(c.id); // freed while it was written
  }
  return out;
}

size_t store_table::evict_for(size_t bytes) {
  struct candidate {
    std::shared_ptr<cached_copy> copy;
    size_t bytes;
    cached_copy::clock::time_point last_use;
    double score;
  };
  std::vector<candidate> candidates;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    for (auto& weak : cached_)
      if (auto c = weak.lock()) candidates.push_back({c, c->bytes(), {}, 0});
  }
  for (auto& c : candidates)
    c.last_use = c.copy->last_use();
  order_by_value(candidates, cached_copy::clock::now());
  size_t freed = 0;
  for (auto& c : candidates) {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      if (bytes <= capacity_ - bytes_) break;
    }
    if (!c.copy->evict()) continue; // being read, or gone
    freed += c.bytes;
    std::lock_guard<std::mutex> guard{mtx_};
    ++evictions_;
  }
  return freed;
}

void store_table::cache(std::weak_ptr<cached_copy> copy) {
  std::lock_guard<std::mutex> guard{mtx_};
  if (cached_.size() >= prune_cached_at_) {
    cached_.erase(std::remove_if(cached_.begin(), cached_.end(),
                                 [](auto& w) { return w.expired(); }),
                  cached_.end());
    prune_cached_at_ = std::max<size_t>(64, 2 * cached_.size());
  }
  cached_.push_back(std::move(copy));
}

void store_table::count_lookup(bool hit) noexcept {
  (hit ? hits_ : misses_).fetch_add(1, std::memory_order_relaxed);
}

void store_table::bind(const object_id& id, std::weak_ptr<detail::object_slot> slot) {
  std::lock_guard<std::mutex> guard{mtx_};
  // The first copy's slot: a copy made again is not spilled (it is counted once).
  if (auto i = objects_.find(id); i != objects_.end() && i->second.slot.expired())
    i->second.slot = std::move(slot);
}

result<detail::restored_value> store_table::restore(const object_id& id,
                                                    const detail::type_descriptor& type) {
  if (!files_)
    return error{errc::object_lost, "object " + id.to_string() + " was not spilled"};
  size_t bytes = 0;
  bool full = false;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    auto i = objects_.find(id);
    if (i == objects_.end())
      return error{errc::object_freed, "object " + id.to_string() + " was freed"};
    bytes = i->second.bytes;
    full = bytes > capacity_ - bytes_;
  }
  // Room first: the memory of what goes (cached copies first, then spilled objects) is
  // kept (pooled) for this value. Spilling stops at once when eviction made the room.
  if (full) {
    evict_for(bytes);
    spill_for(bytes);
  }
  auto value = files_->read(id, type, pool_.get());
  if (!value) return value.err();
  // No room: the reader gets it all the same, and it stays on disk.
  bool kept =
      static_cast<bool>(fit(id, bytes, "object " + id.to_string(), fit_mode::restore));
  return detail::restored_value{std::move(*value), kept};
}

error store_table::full_error(const std::string& what, size_t bytes,
                              const std::optional<error>& spill_failure) {
  std::string spilling;
  if (files_)
    spilling = "; nothing more could be spilled to " + files_->folder() + " (" +
               human_bytes(files_->bytes()) + " spilled" +
               (files_->limit() ? " of at most " + human_bytes(files_->limit()) : "") +
               "): " +
               (spill_failure ? spill_failure->message
                              : "every object in memory is being read or sent");
  return error{errc::store_full,
               what + ", " + human_bytes(bytes) + ", does not fit in the object store: " +
                   human_bytes(bytes_) + " of " + human_bytes(capacity_) +
                   " in memory in use (" + human_bytes(secondary_bytes_) +
                   " of it copies pulled from other nodes)" + spilling};
}

result<std::unique_ptr<detail::store_lease>>
store_table::admit_secondary(const object_id& id, size_t bytes) {
  if (auto ok = fit(id, bytes, "a copy of object " + id.to_string(), fit_mode::secondary);
      !ok)
    return ok.err();
  return std::unique_ptr<detail::store_lease>{
      std::make_unique<secondary_lease>(shared_from_this(), bytes)};
}

void store_table::release_secondary(size_t bytes) {
  std::lock_guard<std::mutex> guard{mtx_};
  bytes_ -= bytes;
  secondary_bytes_ -= bytes;
}

void store_table::release(const object_id& id) {
  bool on_disk = false;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    auto i = objects_.find(id);
    if (i == objects_.end() || --i->second.leases > 0) return;
    if (i->second.in_memory)
      bytes_ -= i->second.bytes;
    else
      --spilled_objects_;
    on_disk = i->second.on_disk;
    objects_.erase(i);
  }
  if (on_disk) files_->remove(id);
}

std::vector<store_table::stored_object> store_table::objects() const {
  std::lock_guard<std::mutex> guard{mtx_};
  std::vector<stored_object> out;
  out.reserve(objects_.size());
  for (auto& [id, e] : objects_)
    out.push_back({id, e.bytes, !e.in_memory});
  return out;
}

store_stats store_table::stats() const {
  auto pooled = pool_->stats();
  // A copy locked here may be the last hold on it (its reader let go meanwhile): it
  // goes after the lock, as its lease takes it to give its bytes back.
  std::vector<std::shared_ptr<cached_copy>> copies;
  std::lock_guard<std::mutex> guard{mtx_};
  store_stats s;
  s.objects = objects_.size();
  s.bytes = bytes_;
  s.secondary_bytes = secondary_bytes_;
  s.capacity = capacity_;
  s.inline_threshold = inline_threshold_;
  s.rejected = rejected_;
  s.pooled_bytes = pooled.bytes;
  s.pool_reuses = pooled.reused;
  s.spilled_objects = spilled_objects_;
  s.spills = spills_;
  s.restores = restores_;
  if (files_) s.spilled_bytes = files_->bytes();
  copies.reserve(cached_.size());
  for (auto& weak : cached_)
    if (auto c = weak.lock()) {
      if (c->peek()) {
        ++s.cached_objects;
        s.cached_bytes += c->bytes();
      }
      copies.push_back(std::move(c));
    }
  s.cache_hits = hits_.load(std::memory_order_relaxed);
  s.cache_misses = misses_.load(std::memory_order_relaxed);
  s.evictions = evictions_;
  return s;
}

bool store_table::contains(const object_id& id) const {
  std::lock_guard<std::mutex> guard{mtx_};
  return objects_.count(id) > 0;
}

} // namespace swarm::actors
