// The composition root: the runtime's constructors start a node's system actors and hand
// them to the framework, which knows them only as `detail::core`.

#include "framework/runtime.hpp"

#include "actors/node/cluster_node.hpp"
#include "actors/node/local_node.hpp"
#include "runtime/worker_processes.hpp"

namespace swarm {

namespace {

// Forks the local cluster's worker node processes, then runs its head here and waits
// until every node joined.
std::unique_ptr<detail::core> start_local_cluster(const application& app,
                                                  const local_cluster_config& lc) {
  auto cfg = make_local_cluster(lc);
  if (!cfg) throw failure{cfg.err()};
  std::vector<std::string> workers;
  for (auto& n : cfg->nodes)
    if (n.role == node_spec::role_type::worker) workers.push_back(n.name);
  // The workers are forked first, while this process has one thread; they retry joining
  // until the head below listens.
  auto children = worker_processes::fork_nodes(app, *cfg, workers);
  if (!children) throw failure{children.err()};
  auto head = std::make_unique<actors::cluster_node>(app, *cfg, cfg->head().name);
  auto joined = head->wait_for_nodes(cfg->nodes.size(), lc.join_timeout);
  if (joined < cfg->nodes.size()) {
    auto exited = (*children)->exited();
    throw failure{{errc::node_unreachable,
                   "local cluster: " + std::to_string(joined) + " of " +
                       std::to_string(cfg->nodes.size()) + " nodes joined within " +
                       std::to_string(lc.join_timeout.count()) + " ms" +
                       (exited.empty() ? "" : " (" + exited + ")")}};
  }
  head->adopt(std::move(*children));
  return head;
}

} // namespace

runtime::runtime(const application& app, const runtime_config& cfg)
    : node_holder(std::make_unique<actors::local_node>(app, cfg)),
      context(*node_, node_->new_owner_id()) {}

runtime::runtime(const application& app, const cluster_config& cluster,
                 const std::string& node)
    : node_holder(std::make_unique<actors::cluster_node>(app, cluster, node)),
      context(*node_, node_->new_owner_id()) {
  node_->job_event(owner_id(), true);
}

namespace {

std::unique_ptr<detail::core> join_as_client(const application& app,
                                             const client_options& o) {
  auto cfg = client_cluster(o);
  if (!cfg) throw failure{cfg.err()};
  auto name = cfg->nodes.back().name;
  auto node = std::make_unique<actors::cluster_node>(app, std::move(*cfg), name);
  // Joined once the head's node table came: work is placed by it. A head that refuses
  // the client (a signature clash) says why in a stop request instead.
  auto deadline = std::chrono::steady_clock::now() + o.timeout;
  while (node->wait_for_nodes(2, std::chrono::milliseconds(50)) < 2) {
    if (node->wait_for_stop(std::chrono::milliseconds(0)))
      throw failure{{errc::invalid_argument,
                     "client '" + name + "': the head at " + o.address + ":" +
                         std::to_string(o.port) + " refused it: " + node->stop_reason()}};
    if (std::chrono::steady_clock::now() >= deadline)
      throw failure{{errc::timeout, "client '" + name + "': the head at " + o.address +
                                        ":" + std::to_string(o.port) +
                                        " sent no node table within " +
                                        std::to_string(o.timeout.count()) + " ms"}};
  }
  return node;
}

} // namespace

runtime::runtime(const application& app, const client_options& client)
    : node_holder(join_as_client(app, client)), context(*node_, node_->new_owner_id()) {
  node_->job_event(owner_id(), true);
}

runtime::runtime(const application& app, const local_cluster_config& cfg)
    : node_holder(start_local_cluster(app, cfg)),
      context(*node_, node_->new_owner_id()) {
  node_->job_event(owner_id(), true);
}

runtime::~runtime() {
  node_->job_event(owner_id(), false);
}

} // namespace swarm
