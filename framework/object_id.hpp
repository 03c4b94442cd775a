#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace swarm {

/// Names one immutable object cluster-wide: the owner that created it and a sequence
/// number unique within that owner.
struct object_id {
  uint64_t owner = 0; ///< the owner that made it (its node's index in the high bits)
  uint64_t seq = 0;   ///< unique among the objects of that owner

  /// The same object.
  friend bool operator==(const object_id& a, const object_id& b) {
    return a.owner == b.owner && a.seq == b.seq;
  }
  /// Other objects.
  friend bool operator!=(const object_id& a, const object_id& b) { return !(a == b); }

  /// "obj-<owner>-<seq>".
  std::string to_string() const {
    return "obj-" + std::to_string(owner) + "-" + std::to_string(seq);
  }
};

/// How CAF reads and writes an `object_id` (its owner, then its sequence number).
template <class Inspector> bool inspect(Inspector& f, object_id& x) {
  return f(x.owner, x.seq);
}

} // namespace swarm

namespace std {

/// Hashes an `object_id`, for unordered containers.
template <> struct hash<swarm::object_id> {
  /// Mixes the owner into the sequence number.
  size_t operator()(const swarm::object_id& x) const noexcept {
    return std::hash<uint64_t>{}(x.owner * 0x9e3779b97f4a7c15ULL ^ x.seq);
  }
};

} // namespace std
