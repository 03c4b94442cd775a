#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "framework/detail/core.hpp"
#include "framework/options.hpp"

namespace swarm {

/// A gang of resource bundles reserved across the nodes of a cluster, all or none (Ray's
/// placement group): made with `context::create_placement_group`, used by tasks and
/// actors through `bundle(i)`, removed with `context::remove_placement_group`.
class placement_group {
public:
  placement_group() = default;

  /// For the runtime.
  placement_group(detail::core& c, uint64_t id, placement_group_options o)
      : core_(&c), id_(id), options_(std::move(o)) {}

  /// Whether it names a group (a default-made one does not).
  bool valid() const noexcept { return core_ != nullptr; }
  /// The group's id in the cluster.
  uint64_t id() const noexcept { return id_; }
  /// Its bundles and strategy, as made.
  const placement_group_options& options() const noexcept { return options_; }

  /// Waits up to `timeout` until every bundle is reserved; the node holding each, in
  /// order. A group that does not fit yet waits until it does (a group removed, a node
  /// joined); one with a bundle on a node that died is placed again, as a whole.
  result<std::vector<std::string>> wait(std::chrono::milliseconds timeout) const {
    if (!core_) return error{errc::invalid_argument, "wait on an empty placement_group"};
    auto p = core_->wait_group(id_, timeout);
    if (!p) return p.err();
    return p->nodes;
  }

  /// Bundle `i`, for `task_options::bundle` and `actor_options::bundle`.
  bundle_ref bundle(uint32_t i) const { return {id_, i}; }

private:
  detail::core* core_ = nullptr;
  uint64_t id_ = 0;
  placement_group_options options_;
};

} // namespace swarm
