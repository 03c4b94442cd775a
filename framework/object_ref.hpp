#pragma once

#include <chrono>
#include <memory>
#include <type_traits>

#include "framework/detail/object_slot.hpp"
#include "framework/detail/type_descriptor.hpp"
#include "framework/object_id.hpp"
#include "base/result.hpp"

namespace swarm {

/// Waits forever.
inline constexpr std::chrono::milliseconds forever = std::chrono::milliseconds::max();

namespace detail {

/// A deadline `timeout` from now, saturating at "never".
object_slot::clock::time_point deadline_after(std::chrono::milliseconds timeout);

/// The time left until `deadline`, `forever` for a deadline that never comes.
std::chrono::milliseconds remaining(object_slot::clock::time_point deadline);

/// Lends the object of `slot` through the node writing (`ctx`, when it is one).
void write_ref(codec_context* ctx, const slot_ptr& slot);

/// The slot a ref of `id` read by the node `ctx` names; it holds a `type`.
result<slot_ptr> read_ref(codec_context* ctx, const object_id& id,
                          const type_descriptor& type);

/// Reads a slot as a `T` after waiting up to `timeout`.
result<std::shared_ptr<const void>> read_slot(const object_slot& slot,
                                              const type_descriptor& expected,
                                              std::chrono::milliseconds timeout);

} // namespace detail

/// A future: names an object that a task, an actor call or `put` makes, possibly not yet.
/// Copies refer to the same object; the object is freed when no reference remains.
/// A ref is a value too: an argument, a member of a result or of a user type, on one
/// node and across nodes. A node that reads one borrows the object; its owner keeps it
/// until every borrowed ref of it has gone, cluster-wide.
template <class T> class object_ref {
public:
  using value_type = T; ///< what the object holds

  object_ref() = default;

  /// Wraps a slot; for the runtime.
  explicit object_ref(detail::slot_ptr slot) : slot_(std::move(slot)) {}

  /// Whether this refers to an object at all.
  bool valid() const noexcept { return slot_ != nullptr; }

  /// The object's cluster-wide id (a valid ref only).
  const object_id& id() const { return slot_->id(); }

  /// Whether the object (or the error that replaced it) exists yet.
  bool ready() const { return slot_ && slot_->done(); }

  /// Waits up to `timeout` for the object and returns a copy of it, or the error.
  auto get(std::chrono::milliseconds timeout = forever) const {
    auto p = get_shared(timeout);
    if constexpr (std::is_void_v<T>) {
      return p ? result<void>{} : result<void>{p.err()};
    } else {
      return p ? result<T>{**p} : result<T>{p.err()};
    }
  }

  /// Waits up to `timeout` and returns the stored object itself, without copying it.
  result<std::shared_ptr<const detail::stored_t<T>>>
  get_shared(std::chrono::milliseconds timeout = forever) const {
    using stored = detail::stored_t<T>;
    if (!slot_) return error{errc::invalid_argument, "get on an empty object_ref"};
    auto p = detail::read_slot(*slot_, detail::type_of<stored>(), timeout);
    if (!p) return p.err();
    return std::static_pointer_cast<const stored>(*p);
  }

  /// The slot behind this reference; for the runtime.
  const detail::slot_ptr& slot() const noexcept { return slot_; }

private:
  detail::slot_ptr slot_;
};

/// Encodes a ref as its object's id; reading it borrows the object (see `core::borrow`).
template <class Inspector, class T> bool inspect(Inspector& f, object_ref<T>& r) {
  bool has = r.valid();
  object_id id;
  if constexpr (std::is_same_v<Inspector, binary_reader>) {
    if (!f(has)) return false;
    if (!has) {
      r = {};
      return true;
    }
    if (!f(id)) return false;
    auto slot = detail::read_ref(f.context(), id, detail::type_of<detail::stored_t<T>>());
    if (!slot) return f.fail(slot.err().message);
    r = object_ref<T>{std::move(*slot)};
    return true;
  } else {
    if (!has) return f(has);
    id = r.id();
    detail::write_ref(f.context(), r.slot());
    return f(has, id);
  }
}

/// Whether `T` is an `object_ref`.
template <class T> struct is_object_ref : std::false_type {};
template <class T> struct is_object_ref<object_ref<T>> : std::true_type {};

} // namespace swarm
