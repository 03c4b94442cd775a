#include "framework/runtime.hpp"

namespace swarm {

runtime::runtime(const application& app, const runtime_config& cfg)
    : node_holder(detail::start_local_node(app, cfg)),
      context(*node_, node_->new_owner_id()) {}

runtime::runtime(const application& app, const cluster_config& cluster,
                 const std::string& node)
    : node_holder(detail::start_cluster_node(app, cluster, node)),
      context(*node_, node_->new_owner_id()) {
  node_->job_event(owner_id(), true);
}

runtime::runtime(const application& app, const local_cluster_config& cfg)
    : node_holder(detail::start_local_cluster(app, cfg)),
      context(*node_, node_->new_owner_id()) {
  node_->job_event(owner_id(), true);
}

runtime::~runtime() {
  node_->job_event(owner_id(), false);
}

} // namespace swarm
