#pragma once

#include <memory>

#include "framework/application.hpp"
#include "framework/cluster.hpp"
#include "framework/cluster_config.hpp"
#include "framework/context.hpp"
#include "framework/local_cluster.hpp"
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
  /// Starts an embedded node running `app`'s functions and actor types, set up by `cfg`.
  explicit runtime(const application& app, const runtime_config& cfg = {});

  /// Joins the cluster `cluster` as its node `node` (listening on that node's port):
  /// work goes wherever the cluster's schedulers place it.
  runtime(const application& app, const cluster_config& cluster, const std::string& node);

  /// Connects to a running cluster as a client, by its head's address and the secret:
  /// this program is no node of the cluster's file and runs none of its work; its tasks
  /// and actors run on the cluster, its objects live here and on the nodes that use
  /// them. Destroying it leaves the cluster, which frees what it owned there. Throws when
  /// the head cannot be reached, refuses the secret or a function or actor type is
  /// registered here under another signature than on the cluster.
  runtime(const application& app, const client_options& client);

  /// Starts a cluster of `cfg.nodes` node processes on 127.0.0.1 and joins it as its
  /// head: returns once every node joined (or throws naming the nodes that did not).
  /// Create it before any other runtime or thread: the workers are forked.
  runtime(const application& app, const local_cluster_config& cfg);
  ~runtime();

  /// The cluster this runtime is a node of (for a local cluster: the file it made up);
  /// null for an embedded single node.
  const cluster_config* cluster() const { return node_->cluster(); }

  /// Waits up to `timeout` until `n` nodes of the cluster (this one included) are alive,
  /// for a program that should not submit work before its workers joined; how many are
  /// (an embedded single node: 1 at once).
  size_t wait_for_nodes(size_t n, std::chrono::milliseconds timeout) {
    return node_->wait_for_nodes(n, timeout);
  }

  /// A snapshot of the node's store, scheduler and control store.
  node_stats stats() { return node_->stats(); }

  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;
};

} // namespace swarm
