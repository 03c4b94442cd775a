#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "actors/node/node_link.hpp"

namespace swarm::actors {

/// The control store as a cluster node sees it: the head keeps the node, job, object and
/// key-value tables in its shards (replicated along chains to other nodes); other nodes
/// send their rows and requests there.
class cluster_store {
public:
  explicit cluster_store(node_link& link) : link_(link) {}

  /// Writes a node's row (on the head), and tells the global scheduler.
  void record_node(wire_msg::node_info info);
  /// The head: drops the row of a node outside the file (a client, a node that joined by
  /// address) that left, and ends the jobs it drove.
  void forget_node(const std::string& node);
  /// Marks node rows restored from disk as not alive (the head just started).
  void forget_restored_liveness();
  /// A job or object row, written on the head (sent there from other nodes).
  void publish(wire_msg::message row);
  void on_row(const wire_msg::job_info& j);
  void on_row(const wire_msg::object_location& o);
  void job_event(uint64_t id, bool running);
  /// The rows of `table` ("node", "job", "object"); only the head holds them.
  result<std::vector<table_row>> control_table(const std::string& table);
  /// The node and job tables as the control store holds them, for `swarm status`.
  result<wire_msg::node_table> stored_table();
  result<std::optional<std::vector<uint8_t>>>
  kv(detail::kv_op op, const std::string& name, std::vector<uint8_t> value);
  /// Another node's key-value request: answered when this node serves the key's shard
  /// (the head, or the node the head's placement names).
  void on_kv_request(const std::string& peer, wire_msg::kv_request m);

private:
  // One try of `kv` at `node` (this one, or another by a request).
  result<std::optional<std::vector<uint8_t>>> kv_at(const std::string& node,
                                                    detail::kv_op op,
                                                    const std::string& name,
                                                    std::vector<uint8_t> value);

  node_link& link_;
};

} // namespace swarm::actors
