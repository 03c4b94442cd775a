#include "actors/store_table.hpp"

#include <algorithm>
#include <cstdio>

namespace swarm::actors {

class table_lease final : public detail::store_lease {
public:
  table_lease(std::shared_ptr<store_table> table, object_id id)
      : table_(std::move(table)), id_(id) {}
  ~table_lease() override { table_->release(id_); }

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

store_table::store_table(size_t capacity, size_t inline_threshold, size_t pool_bytes)
    : capacity_(capacity), inline_threshold_(inline_threshold),
      pool_(std::make_shared<detail::value_pool>(
          std::min(pool_bytes, capacity),
          std::max<size_t>(inline_threshold, size_t{1} << 20))) {}

void store_table::make_room(size_t bytes) {
  size_t free = 0;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    free = capacity_ - bytes_;
  }
  auto pooled = pool_->stats().bytes;
  if (bytes <= free && pooled > free - bytes) pool_->shed(pooled - (free - bytes));
}

result<std::unique_ptr<detail::store_lease>>
store_table::admit(const object_id& id, const detail::boxed_value& value) {
  auto bytes = value.type->byte_size(value.ptr.get());
  if (bytes < inline_threshold_) return std::unique_ptr<detail::store_lease>{};
  make_room(bytes);
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (bytes > capacity_ - bytes_)
      return full_error("object " + id.to_string() + " (" + value.type->name + ")",
                        bytes);
    auto [i, added] = objects_.emplace(id, bytes);
    if (!added)
      return error{errc::invalid_argument,
                   "object " + id.to_string() + " is already stored"};
    bytes_ += bytes;
  }
  return std::unique_ptr<detail::store_lease>{
      std::make_unique<table_lease>(shared_from_this(), id)};
}

error store_table::full_error(const std::string& what, size_t bytes) {
  ++rejected_;
  return error{errc::store_full,
               what + ", " + human_bytes(bytes) +
                   ", does not fit in the object store: " + human_bytes(bytes_) + " of " +
                   human_bytes(capacity_) + " in use (" + human_bytes(secondary_bytes_) +
                   " of it copies pulled from other nodes)"};
}

result<std::unique_ptr<detail::store_lease>>
store_table::admit_secondary(const object_id& id, size_t bytes) {
  make_room(bytes);
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (bytes > capacity_ - bytes_)
      return full_error("a copy of object " + id.to_string(), bytes);
    bytes_ += bytes;
    secondary_bytes_ += bytes;
  }
  return std::unique_ptr<detail::store_lease>{
      std::make_unique<secondary_lease>(shared_from_this(), bytes)};
}

void store_table::release_secondary(size_t bytes) {
  std::lock_guard<std::mutex> guard{mtx_};
  bytes_ -= bytes;
  secondary_bytes_ -= bytes;
}

void store_table::release(const object_id& id) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = objects_.find(id);
  if (i == objects_.end()) return;
  bytes_ -= i->second;
  objects_.erase(i);
}

std::vector<std::pair<object_id, size_t>> store_table::objects() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return {objects_.begin(), objects_.end()};
}

store_stats store_table::stats() const {
  auto pooled = pool_->stats();
  std::lock_guard<std::mutex> guard{mtx_};
  return {objects_.size(),   bytes_,    secondary_bytes_, capacity_,
          inline_threshold_, rejected_, pooled.bytes,     pooled.reused};
}

bool store_table::contains(const object_id& id) const {
  std::lock_guard<std::mutex> guard{mtx_};
  return objects_.count(id) > 0;
}

} // namespace swarm::actors
