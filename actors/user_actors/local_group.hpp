#pragma once

#include <caf/actor.hpp>

#include <memory>
#include <mutex>
#include <string>

#include "actors/user_actors/actor_host.hpp"
#include "framework/detail/group_record.hpp"

namespace swarm::actors {

/// A supervision tree over actors running on this node: its root supervisor and its actor
/// children. When the last handle goes, the root is asked to stop.
class local_group final : public detail::group_record {
public:
  explicit local_group(std::shared_ptr<node_liveness> node) : node_(std::move(node)) {}
  ~local_group() override;

  void add_child(const std::string& id, detail::actor_record_ptr rec) {
    children_.emplace(id, std::move(rec));
  }

  bool has_child(const std::string& id) const { return children_.count(id) > 0; }

  void set_root(caf::actor root);

  caf::actor root() const;

  /// Drops the CAF handle; the node calls this while it stops.
  void detach();

private:
  std::shared_ptr<node_liveness> node_;
  // Guards root_: set on the user's thread, dropped by the node's stop(), read by the
  // last handle's destructor on any thread (handles outlive the node).
  mutable std::mutex mtx_;
  caf::actor root_;
};

} // namespace swarm::actors
