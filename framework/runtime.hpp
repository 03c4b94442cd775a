#pragma once

#include <memory>

#include "framework/application.hpp"
#include "framework/cluster_config.hpp"
#include "framework/context.hpp"
#include "framework/runtime_config.hpp"

namespace swarm {

namespace detail {

/// Owns the node so it is built before the `context` base that points at it.
class node_holder {
protected:
  explicit node_holder(std::unique_ptr<core> c) : node_(std::move(c)) {}
  std::unique_ptr<core> node_;
};

} // namespace detail

/// A Swarm node inside this program, and the driver's context on it. With no
/// configuration it is an embedded single-node cluster sized to the machine.
/// Destroying it stops the node: work still queued fails with `runtime_stopped`.
class runtime final : private detail::node_holder, public context {
public:
  explicit runtime(const application& app, const runtime_config& cfg = {});

  /// Joins the cluster `cluster` as its node `node` (listening on that node's port):
  /// work goes wherever the cluster's schedulers place it.
  runtime(const application& app, const cluster_config& cluster, const std::string& node);
  ~runtime();

  /// A snapshot of the node's store, scheduler and control store.
  node_stats stats() { return node_->stats(); }

  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;
};

} // namespace swarm
