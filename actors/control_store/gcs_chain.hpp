#pragma once

// Chain replication of the control store's shards: a write enters at the chain's head
// (the cluster's head node), passes every member in order, and is acknowledged by the
// tail to the head, which then applies it and answers the writer.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "actors/control_store/gcs_record.hpp"
#include "transport/wire_message.hpp"

namespace swarm::actors {

/// How a shard reaches the other members of its chain. The node sets it once its
/// transport is up; until then there is no chain and nothing is sent.
class gcs_chain_link {
public:
  using send_fn = std::function<void(const std::string& to, wire_msg::gcs_chain)>;

  /// `self` is this node's name, `send` delivers a message to the named node.
  void set(std::string self, send_fn send);

  /// This node's name; empty before `set`.
  std::string self() const;

  /// Sends `m` to node `to`; does nothing before `set`.
  void send(const std::string& to, wire_msg::gcs_chain m) const;

  /// The node's latest placement of the key-value shards (the node sets it as it
  /// learns one; version 0 before): a shard told of a later configuration than its own
  /// looks here whether it heads its chain after all.
  void set_placement(wire_msg::kv_placement p);
  std::shared_ptr<const wire_msg::kv_placement> placement() const;

private:
  // Set once, read by every shard's sends: an immutable pair swapped whole.
  struct wiring {
    std::string self;
    send_fn send;
  };
  std::shared_ptr<const wiring> wiring_ = std::make_shared<const wiring>();
  std::shared_ptr<const wire_msg::kv_placement> placement_ =
      std::make_shared<const wire_msg::kv_placement>();
};

/// The records as the `records` bytes of a chain message.
std::vector<uint8_t> encode_records(const std::vector<gcs_record>& recs);

/// Every row of `tables` as a put record.
std::vector<gcs_record> records_of(const row_tables& tables);

/// The records of a chain message; an error naming the damage.
result<std::vector<gcs_record>> decode_records(const std::vector<uint8_t>& bytes);

/// The member after `self` in `members`, empty when `self` is the tail or not a member.
std::string successor(const std::vector<std::string>& members, const std::string& self);

} // namespace swarm::actors
