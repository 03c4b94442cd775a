#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "framework/detail/actor_address.hpp"
#include "framework/detail/actor_record.hpp"
#include "framework/detail/device_memory.hpp"
#include "framework/detail/group_record.hpp"
#include "framework/detail/object_slot.hpp"
#include "framework/detail/ref_lender.hpp"
#include "framework/detail/task_spec.hpp"
#include "framework/node_stats.hpp"
#include "framework/options.hpp"
#include "framework/resources.hpp"

namespace swarm {
class application;
struct cluster_config;
} // namespace swarm

namespace swarm::detail {

struct group_spec;
class value_pool;

/// An operation on the control store's key-value table.
enum class kv_op { get, put, erase };

/// Where a placed placement group's bundles are: a node per bundle, and what each holds.
struct group_placement {
  std::vector<std::string> nodes;
  std::vector<resource_set> bundles;
};

/// What the public API needs from a node. The framework defines it; the node's system
/// actors (in actors/) implement it. It writes and reads the values that cross it (the
/// actor handles and object refs in them), so it is their coder's context.
class core : public ref_lender {
public:
  virtual ~core();

  /// The registry this node runs.
  virtual const application& app() const = 0;

  /// A fresh owner identity for a driver, worker or actor.
  virtual uint64_t new_owner_id() = 0;

  /// A fresh object id for `owner`.
  virtual object_id new_object_id(uint64_t owner) = 0;

  /// The node's total resources.
  virtual const resource_set& total_resources() const = 0;

  /// Whether some node could ever run work demanding `demand` (on `node` when given)
  /// that calls the task function `function` (none: empty); the reason when none could.
  virtual result<void> feasible(const resource_set& demand, const std::string& node,
                                const std::string& function = {});

  /// Waits up to `timeout` until `n` nodes (this one included) are alive in the
  /// cluster; how many are. A single node is one at once.
  virtual size_t wait_for_nodes(size_t n, std::chrono::milliseconds timeout) {
    (void)n;
    (void)timeout;
    return 1;
  }

  /// Queues a task whose dependencies are all ready.
  virtual void submit(task_ptr task) = 0;

  /// Tries to cancel a task that has not started; returns whether it will not run.
  virtual bool cancel(task_spec& task) = 0;

  /// Accounts a value in the object store; returns no lease for small inline values and
  /// `store_full` when the store has no room.
  virtual result<std::unique_ptr<store_lease>> admit(const object_id& id,
                                                     const boxed_value& value) = 0;

  /// Where large values put on this node get their memory; nullptr: from the allocator.
  virtual value_pool* pool() { return nullptr; }

  /// Keeps the stored value of `slot` on `copies` distinct nodes: this one and the
  /// least busy others. Nothing on an embedded single node (there is no other).
  virtual void replicate(const slot_ptr& slot, uint32_t copies) {
    (void)slot;
    (void)copies;
  }

  /// Creates an actor.
  virtual result<actor_record_ptr> spawn(actor_spec spec) = 0;

  /// Sends a call to an actor; calls from one thread arrive in order.
  virtual void call(actor_record& target, task_ptr call) = 0;

  /// Stops an actor, restarting it when `restart` is set and its policy allows.
  virtual void kill(actor_record& target, bool restart) = 0;

  /// Finds a named actor.
  virtual result<actor_record_ptr> find_actor(const std::string& name) = 0;

  /// Where other nodes reach `target` (a handle of it is being sent): this node hosts
  /// it for them from now on, while it lives.
  virtual actor_address address_of(const actor_record_ptr& target) = 0;

  /// Keeps `slot` findable by its id here while it lives: a value holding a ref of it
  /// is being written (see `borrow`). Nothing on an embedded single node.
  void lend(const slot_ptr& slot) override { (void)slot; }

  /// The object a ref read here names (`type` is what the ref holds): this node's own
  /// slot when the object is owned here; otherwise a borrowed slot, whose owner keeps
  /// the object until every borrowed slot of it has gone, cluster-wide (the borrower
  /// protocol). An embedded single node reads no refs.
  virtual result<slot_ptr> borrow(const object_id& id, const type_descriptor& type);

  /// Makes placement group `id` (see `placement_group_options`): accepted, or why it
  /// never fits, at once; its bundles are reserved when they fit, all at once.
  virtual result<void> create_group(uint64_t id, const placement_group_options& o);

  /// Waits up to `timeout` until group `id` is placed (0: only asks); where it is.
  virtual result<group_placement> wait_group(uint64_t id,
                                             std::chrono::milliseconds timeout);

  /// Removes group `id`, freeing what it reserved.
  virtual result<void> remove_group(uint64_t id);

  /// The record a handle that arrived here uses to reach the actor at `addr`: this
  /// node's own when it lives here. `actor_died` when it lived here and is gone.
  virtual result<actor_record_ptr> actor_at(const actor_address& addr) = 0;

  /// Starts a supervision tree over actors.
  virtual result<group_record_ptr> supervise(const group_spec& spec) = 0;

  /// A snapshot of the node's store, scheduler and control store.
  virtual node_stats stats() = 0;

  /// A driver (a runtime) starts or ends its job `id` on this node: the cluster's job
  /// table records it. Nothing for an embedded single node.
  virtual void job_event(uint64_t id, bool running);

  /// What `task` (nullptr: no task) printed with `context::print`: printed here, or
  /// sent to the node that asked for the task.
  virtual void output(const task_spec* task, std::string_view text);

  /// The node's name in its cluster; "local" for an embedded single node.
  virtual const std::string& node_name() const;

  /// Logs `line` as a warning of this node.
  virtual void warn(const std::string& line) const;

  /// The cluster this node belongs to; null for an embedded single node.
  virtual const cluster_config* cluster() const { return nullptr; }

  /// The node's GPUs; null when it has none.
  virtual std::shared_ptr<device_memory> devices() { return nullptr; }

  /// Reads, writes or erases `key` of the control store's key-value table; a get gives
  /// the value (nullopt when absent), a put and an erase nullopt once they are stored.
  virtual result<std::optional<std::vector<uint8_t>>> kv(kv_op op, const std::string& key,
                                                         std::vector<uint8_t> value) = 0;
};

/// The control-store key of the durable checkpoints of the actor named `name`.
inline std::string durable_checkpoint_key(const std::string& name) {
  return "checkpoint/" + name;
}

/// How output of `task` is labelled: its function, or its actor type and method.
std::string output_label(const task_spec& task);

/// Writes `text` to stdout, each line as "(FUNCTION on NODE) line" ("(NODE) line" without
/// a function), in one write.
void print_output(const std::string& function, const std::string& node,
                  std::string_view text);

} // namespace swarm::detail
