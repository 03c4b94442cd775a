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

#include "actors/common/owner_counter.hpp"
#include "actors/common/topology.hpp"
#include "actors/control_store/gcs_shards.hpp"
#include "actors/objects/store_table.hpp"
#include "actors/observability/node_metrics.hpp"
#include "actors/scheduling/task_inbox.hpp"
#include "actors/user_actors/actor_host.hpp"
#include "actors/user_actors/hosted_table.hpp"
#include "actors/user_actors/local_group.hpp"
#include "actors/workers/node_devices.hpp"
#include "framework/application.hpp"
#include "framework/detail/core.hpp"
#include "framework/detail/supervisor_actor.hpp"
#include "framework/runtime_config.hpp"
#include "framework/supervisor_spec.hpp"
#include "transport/wire_message.hpp"

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
  detail::value_pool* pool() override { return &store_->pool(); }
  std::shared_ptr<detail::device_memory> devices() override { return devices_; }
  const runtime_config& config() const noexcept { return config_; }
  /// Counts a copy pulled from another node against this node's store (see
  /// `store_table::admit_secondary`).
  result<std::unique_ptr<detail::store_lease>> admit_secondary(const object_id& id,
                                                               size_t bytes);
  /// The object store's table, for the parts that share it (the object manager's
  /// cached copies).
  const std::shared_ptr<store_table>& store_table_ptr() const { return store_; }
  result<detail::actor_record_ptr> spawn(detail::actor_spec spec) override;
  void call(detail::actor_record& target, detail::task_ptr call) override;
  void kill(detail::actor_record& target, bool restart) override;
  result<detail::actor_record_ptr> find_actor(const std::string& name) override;
  result<void> create_group(uint64_t id, const placement_group_options& o) override;
  result<detail::group_placement> wait_group(uint64_t id,
                                             std::chrono::milliseconds timeout) override;
  result<void> remove_group(uint64_t id) override;
  detail::actor_address address_of(const detail::actor_record_ptr& target) override;
  result<detail::actor_record_ptr> actor_at(const detail::actor_address& addr) override;
  result<detail::group_record_ptr> supervise(const detail::group_spec& spec) override;
  node_stats stats() override;
  /// The object store's accounting alone (never blocks on an actor).
  store_stats store_accounting() const;

  result<std::optional<std::vector<uint8_t>>> kv(detail::kv_op op, const std::string& key,
                                                 std::vector<uint8_t> value) override;

  /// The node's control-store shards: tables, names, key-value, chain replication.
  gcs_shards& gcs() { return *gcs_; }

  /// The node's supervisor (for tests that crash system actors).
  const caf::actor& supervisor() const { return supervisor_; }

  /// The local scheduler running now (it is restarted by the supervisor), to ask for
  /// its stats without blocking.
  caf::actor scheduler();

  caf::actor_system& system() { return *sys_; }

  /// The node's log.
  const node_log& log() const { return log_; }
  void warn(const std::string& line) const override { log_.warn(line); }

  /// Adds this node's numbers to a scrape of its metrics: tasks by function, the
  /// scheduler's queue and workers, the object store, the control store.
  void collect(metric_set& out);

  /// What this node runs or holds, for `swarm list`: `what` is "tasks" (queued and at
  /// workers), "actors" (hosted here), "objects" (stored here) or "timeline" (the last
  /// tasks and actor calls that ended, as `wire_msg::timeline_kind` says), "logs" (the
  /// last lines of its log, in `detail`), "failures" (the last tasks that failed, newest
  /// first, the error in `detail`, the end time in `numbers`) or "summary" (per function
  /// a row "function" with submitted, running, finished and failed; a row "actors" with
  /// alive and dead; a row "objects" with objects, bytes and pulled bytes).
  result<std::vector<wire_msg::list_row>> list(const std::string& what);

  /// The port its metrics are served on; 0 when they are not (or a cluster node serves
  /// them).
  uint16_t metrics_port() const { return metrics_ ? metrics_->port() : 0; }

private:
  // How long the node waits for one of its own actors to answer.
  static constexpr std::chrono::seconds request_timeout{10};
  // Adds the last calls of each actor alive here to a "timeline" list.
  void add_actor_calls(std::vector<wire_msg::list_row>& out);

  enum class part { gcs, store, scheduler };

  // The current actor of part `p`; for the control store, the shard owning `key`.
  caf::actor current(part p, const std::string& key = {});
  void set_current(part p, caf::actor a, size_t shard = 0);
  void on_supervisor_event(const std::string& event);
  // Waits until each GPU worker has opened its device (a CUDA context takes a while):
  // tasks that start at once find it running. One that cannot start is logged, and the
  // node serves on without it.
  void wait_for_gpu_workers();
  result<detail::supervisor_config> tree_config(const detail::group_spec& spec,
                                                const std::shared_ptr<local_group>& group,
                                                bool root);

  const application& app_;
  detail::core* outer_;
  runtime_config config_;
  node_log log_;
  topology topo_;
  resource_set total_;
  std::shared_ptr<store_table> store_;
  std::shared_ptr<node_liveness> liveness_;
  caf::actor_system_config sys_config_;
  std::unique_ptr<caf::actor_system> sys_;
  caf::actor supervisor_;

  // Guards the store and scheduler handles and the start state: the supervisor swaps
  // them on restarts; user threads read them on each submit, without a hop.
  std::mutex parts_mtx_;
  std::unique_ptr<gcs_shards> gcs_;
  std::string start_error_; // why a control-store shard could not start
  bool started_ = false;    // the constructor returned
  caf::actor store_actor_;
  caf::actor scheduler_;
  caf::actor placement_; // keeps placement groups, for an embedded node
  std::shared_ptr<node_devices> devices_; // null without GPUs

  // Counted from this process's start: a call id kept in a state an earlier process
  // saved (a durable checkpoint) is never made again.
  owner_counter owners_;
  std::atomic<uint64_t> next_seq_{1};
  std::atomic<bool> stopping_{false};
  // Actors whose handles were encoded (spilled in a value), to read them back.
  hosted_table shared_;
  std::atomic<uint64_t> next_shared_{1};
  task_inbox inbox_;
  // Last in, first out: no scrape outlives what it asks.
  std::unique_ptr<node_metrics> metrics_;

  // Guards hosts_ and groups_: spawn and supervise add on the user's thread; scrapes,
  // lists and stop() walk them (stop() detaches each before the actor system goes).
  std::mutex hosts_mtx_;
  std::vector<std::weak_ptr<host_record>> hosts_;
  std::vector<std::weak_ptr<local_group>> groups_;
};

} // namespace swarm::actors
