#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include "actors/actor_host.hpp"
#include "actors/gcs_shard.hpp"
#include "actors/local_group.hpp"
#include "actors/store_table.hpp"
#include "actors/task_inbox.hpp"
#include "actors/topology.hpp"
#include "framework/application.hpp"
#include "framework/detail/core.hpp"
#include "framework/detail/supervisor_actor.hpp"
#include "framework/runtime_config.hpp"
#include "framework/supervisor_spec.hpp"

namespace swarm::actors {

/// One node inside this process: a CAF actor system whose `node_supervisor` runs the
/// control store shard, the object store and the local scheduler (rest_for_one: a
/// restarted control store restarts what depends on it).
class local_node final : public detail::core {
public:
  /// `outer` is the core that work running here submits through (a cluster node that
  /// wraps this one); this node itself when null.
  local_node(const application& app, const runtime_config& cfg,
             detail::core* outer = nullptr);
  ~local_node() override;

  /// Stops every actor of the node, waiting for running tasks to finish; what has not
  /// run fails with `runtime_stopped`. While it runs, `outer` is still called (results
  /// of finishing tasks), so a node that wraps this one calls it before it goes.
  void stop();

  const application& app() const override { return app_; }
  uint64_t new_owner_id() override;
  object_id new_object_id(uint64_t owner) override;
  const resource_set& total_resources() const override { return total_; }
  void submit(detail::task_ptr task) override;
  bool cancel(detail::task_spec& task) override;
  result<std::unique_ptr<detail::store_lease>>
  admit(const object_id& id, const detail::boxed_value& v) override;
  result<detail::actor_record_ptr> spawn(detail::actor_spec spec) override;
  void call(detail::actor_record& target, detail::task_ptr call) override;
  void kill(detail::actor_record& target, bool restart) override;
  result<detail::actor_record_ptr> find_actor(const std::string& name) override;
  result<detail::group_record_ptr> supervise(const detail::group_spec& spec) override;
  node_stats stats() override;

  /// Enters `rec` under `name` in the control store; false when the name is taken.
  result<bool> register_name(const std::string& name, detail::actor_record_ptr rec);

  /// Writes `row` under `key` in the control-store table `table` (asynchronous: writes
  /// from one thread apply in order).
  void table_put(const std::string& table, const std::string& key, table_row row);

  /// Removes the row `key` of `table` (asynchronous, in order with puts).
  void table_erase(const std::string& table, const std::string& key);

  /// Every row of `table`, gathered from all shards.
  result<std::vector<table_row>> table_scan(const std::string& table);

  result<std::optional<std::vector<uint8_t>>> kv(detail::kv_op op, const std::string& key,
                                                 std::vector<uint8_t> value) override;

  /// The same, asynchronous: `done` runs on an actor's thread once the shard answered
  /// (after the chain's tail acknowledged a put or erase), or after 10 s with a timeout.
  void kv_async(detail::kv_op op, const std::string& key, std::vector<uint8_t> value,
                std::function<void(result<std::optional<std::vector<uint8_t>>>)> done);

  /// How this node's shards reach other nodes' shards (chain replication).
  const std::shared_ptr<gcs_chain_link>& chain_link() const { return chain_link_; }

  /// Makes every shard here head of a chain of `members` (this node first); a shard
  /// restarted by the supervisor gets the same chain again.
  void set_chain(std::vector<std::string> members);

  /// Hands a chain message from another node to the shard it names; false when this
  /// node has no such shard.
  bool chain_message(wire_msg::gcs_chain m);

  /// The node's supervisor (for tests that crash system actors).
  const caf::actor& supervisor() const { return supervisor_; }

  caf::actor_system& system() { return *sys_; }

private:
  enum class part { gcs, store, scheduler };

  // The current actor of part `p`; for the control store, the shard owning `key`.
  caf::actor current(part p, const std::string& key = {});
  void set_current(part p, caf::actor a, size_t shard = 0);
  void on_supervisor_event(const std::string& event);
  result<detail::supervisor_config> tree_config(const detail::group_spec& spec,
                                                const std::shared_ptr<local_group>& group,
                                                bool root);

  const application& app_;
  detail::core* outer_;
  runtime_config config_;
  topology topo_;
  resource_set total_;
  std::shared_ptr<store_table> store_;
  std::shared_ptr<node_liveness> liveness_;
  caf::actor_system_config sys_config_;
  std::unique_ptr<caf::actor_system> sys_;
  caf::actor supervisor_;

  std::mutex parts_mtx_;
  std::vector<caf::actor> gcs_; // one per control-store shard
  std::vector<std::string> chain_; // the chain the shards here head (set_chain)
  std::shared_ptr<gcs_chain_link> chain_link_ = std::make_shared<gcs_chain_link>();
  std::string start_error_;     // why a control-store shard could not start
  bool started_ = false;        // the constructor returned
  caf::actor store_actor_;
  caf::actor scheduler_;

  std::atomic<uint64_t> next_owner_{1};
  std::atomic<uint64_t> next_seq_{1};
  std::atomic<bool> stopping_{false};
  task_inbox inbox_;

  std::mutex hosts_mtx_;
  std::vector<std::weak_ptr<host_record>> hosts_;
  std::vector<std::weak_ptr<local_group>> groups_;
};

} // namespace swarm::actors
