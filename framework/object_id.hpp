#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace swarm {

/// Names one immutable object cluster-wide: the owner that created it and a sequence
/// number unique within that owner.
struct object_id {
  uint64_t owner = 0;
  uint64_t seq = 0;

  friend bool operator==(const object_id& a, const object_id& b) {
    return a.owner == b.owner && a.seq == b.seq;
  }
  friend bool operator!=(const object_id& a, const object_id& b) { return !(a == b); }

  /// "obj-<owner>-<seq>".
  std::string to_string() const {
    return "obj-" + std::to_string(owner) + "-" + std::to_string(seq);
  }
};

template <class Inspector> bool inspect(Inspector& f, object_id& x) {
  return f(x.owner, x.seq);
}

} // namespace swarm

template <> struct std::hash<swarm::object_id> {
  size_t operator()(const swarm::object_id& x) const noexcept {
    return std::hash<uint64_t>{}(x.owner * 0x9e3779b97f4a7c15ULL ^ x.seq);
  }
};
