#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <type_traits>
#include <utility>

#include "framework/detail/type_descriptor.hpp"

namespace swarm::detail {

/// What a pool holds right now.
struct value_pool_stats {
  size_t values = 0;
  size_t bytes = 0;
  size_t reused = 0; ///< values taken out to hold a new one, since the start
};

/// The memory of freed large values, kept to take the next copy of a value of the same
/// type: a copy into pages that are already faulted in runs at memcpy speed, where one
/// into a fresh allocation pays a page fault and the kernel's zeroing every 4 KiB. It is
/// the object store's arena, kept by type because a value's memory belongs to the value
/// (a `std::vector` cannot adopt bytes from elsewhere). Thread-safe: a value is freed on
/// whichever thread lets go of it last.
class value_pool final : public std::enable_shared_from_this<value_pool> {
public:
  /// Keeps values of at least `min_bytes`, at most `max_bytes` of them in all.
  value_pool(size_t max_bytes, size_t min_bytes);
  ~value_pool();

  value_pool(const value_pool&) = delete;
  value_pool& operator=(const value_pool&) = delete;

  /// Values smaller than this are left to the allocator.
  size_t min_bytes() const noexcept { return min_bytes_; }

  /// Takes out a kept value of `type` of `bytes` or a little more (a bigger one would
  /// hold memory its new value is not counted for); nullptr when there is none.
  void* take(const type_descriptor& type, size_t bytes);

  /// Shares `value` (of `type`, allocated with `new`) so that its memory comes back here
  /// when the last holder lets go, or is deleted when the pool is gone by then.
  std::shared_ptr<void> adopt(void* value, const type_descriptor& type);

  /// Deletes kept values, longest kept first, until `bytes` are freed or none is left;
  /// returns the bytes freed.
  size_t shed(size_t bytes);

  value_pool_stats stats() const;

private:
  struct kept {
    const type_descriptor* type;
    void* value;
    size_t bytes;
  };
  static void destroy(const kept& k) { k.type->destroy(k.value); }
  void give(const type_descriptor& type, void* value);

  const size_t max_bytes_;
  const size_t min_bytes_;
  // Guards the kept values: one comes back on whichever thread lets go last, and the
  // putting thread takes and sheds them.
  mutable std::mutex mtx_;
  std::deque<kept> kept_; // oldest first
  size_t bytes_ = 0;
  size_t reused_ = 0;
};

/// Whether values of `T` can go through a pool: copying one into a kept one must reuse
/// the kept one's memory, which copy assignment does for standard containers.
template <class T>
inline constexpr bool poolable_v =
    std::is_class_v<T> && !std::is_empty_v<T> && std::is_copy_assignable_v<T> &&
    std::is_copy_constructible_v<T>;

/// Boxes `x` for the object store. A large value goes through `pool` (when there is
/// one): a copy is made into a kept value of its type where one fits, and the value's
/// memory goes back to the pool once the object is freed. A moved value is never copied.
template <class T> boxed_value box_for_store(value_pool* pool, T&& x) {
  using U = std::decay_t<T>;
  if constexpr (!poolable_v<U>) {
    return boxed_value::make(std::forward<T>(x));
  } else {
    auto& type = type_of<U>();
    if (!pool) return boxed_value::make(std::forward<T>(x));
    auto bytes = type.byte_size(&x);
    if (bytes < pool->min_bytes()) return boxed_value::make(std::forward<T>(x));
    U* u = nullptr;
    if constexpr (std::is_lvalue_reference_v<T> ||
                  std::is_const_v<std::remove_reference_t<T>>) {
      if (void* p = pool->take(type, bytes)) {
        u = static_cast<U*>(p);
        try {
          *u = x;
        } catch (...) {
          delete u;
          throw;
        }
      }
    }
    if (!u) u = new U(std::forward<T>(x));
    return {pool->adopt(u, type), &type};
  }
}

} // namespace swarm::detail
