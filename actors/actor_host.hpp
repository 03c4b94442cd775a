#pragma once

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <memory>
#include <mutex>

#include "framework/detail/actor_record.hpp"

namespace swarm::detail {
class core;
} // namespace swarm::detail

namespace swarm::actors {

/// Whether the node that hosts actors still runs; records outlive nodes when users keep
/// handles, and must not touch a stopped node.
struct node_liveness {
  std::mutex mtx;
  bool alive = true;
};

/// A live actor as the node sees it: the record of its handles plus the CAF actor that
/// hosts it.
class host_record final : public detail::actor_record {
public:
  host_record(detail::actor_spec spec, std::shared_ptr<node_liveness> node);
  ~host_record() override;

  /// The hosting CAF actor; invalid once the node stopped.
  caf::actor host() const;

  void set_host(caf::actor a);

  /// Drops the CAF handle; the node calls this while it stops.
  void detach();

private:
  std::shared_ptr<node_liveness> node_;
  mutable std::mutex mtx_;
  caf::actor host_;
};

/// Spawns the CAF actor hosting a user actor: it constructs the instance, runs calls one
/// at a time in arrival order (a call whose argument futures are pending holds back those
/// behind it), restarts a crashed instance while `max_restarts` allows, and fails calls
/// with `actor_died` once it cannot.
caf::actor spawn_actor_host(caf::actor_system& sys, detail::core& node,
                            const std::shared_ptr<host_record>& record);

} // namespace swarm::actors
