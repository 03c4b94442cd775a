#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include <caf/actor.hpp>

#include "actors/actor_directory.hpp"
#include "actors/control_client.hpp"
#include "actors/local_node.hpp"
#include "actors/membership.hpp"
#include "actors/object_manager.hpp"
#include "actors/owner.hpp"
#include "framework/cluster.hpp"
#include "framework/cluster_config.hpp"
#include "framework/detail/core.hpp"
#include "transport/endpoint.hpp"

namespace swarm::actors {

class worker_processes;
class remote_actor_record;

/// This process's node of a cluster: the in-process node (its system actors run the
/// work placed here), the TCP endpoint to the other nodes, and the cluster protocol.
/// Bottom-up scheduling: work runs here when this node can hold it and its large
/// inputs are here; otherwise it is spilled to the head's global scheduler, which
/// picks a node by feasible resources, then bytes of inputs already there, then load.
/// Results small enough travel inline to their owner; larger ones stay on the node
/// that made them and are pulled in chunks by whoever needs them. Actor calls go
/// straight from the caller to the actor's node. On the head, the node table and the
/// named-actor table (in the control store's shard actors) live here too.
///
/// Each part of the protocol is a role actor that owns its state: `membership`, the
/// `owner` of the tasks and calls sent elsewhere, the `control_client`, the
/// `object_manager`, the `actor_directory` (and on the head the global scheduler). The
/// network's handlers turn frames into messages for the one that owns their type; what
/// stays here is the composition and the paths that turn a task or call into a message.
class cluster_node final : public detail::core, private membership_port {
public:
  /// Starts node `node` of `cfg`: on TCP, or on the transport `make_transport` starts
  /// (a fake network in tests).
  cluster_node(const application& app, cluster_config cfg, const std::string& node,
               wire_msg::transport_factory make_transport = {});
  ~cluster_node() override;

  const application& app() const override { return local_->app(); }
  uint64_t new_owner_id() override;
  object_id new_object_id(uint64_t owner) override;
  const resource_set& total_resources() const override {
    return local_->total_resources();
  }
  result<void> feasible(const resource_set& demand, const std::string& node) override;
  void submit(detail::task_ptr task) override;
  bool cancel(detail::task_spec& task) override;
  result<std::unique_ptr<detail::store_lease>>
  admit(const object_id& id, const detail::boxed_value& v) override;
  result<detail::actor_record_ptr> spawn(detail::actor_spec spec) override;
  void call(detail::actor_record& target, detail::task_ptr call) override;
  void kill(detail::actor_record& target, bool restart) override;
  result<detail::actor_record_ptr> find_actor(const std::string& name) override;
  result<std::optional<std::vector<uint8_t>>> kv(detail::kv_op op, const std::string& name,
                                                 std::vector<uint8_t> value) override;
  result<detail::group_record_ptr> supervise(const detail::group_spec& spec) override;
  node_stats stats() override;
  const cluster_config* cluster() const override { return &cfg_; }
  const std::string& node_name() const override { return self_.name; }
  void job_event(uint64_t id, bool running) override;

  /// The rows of the control-store table `table` ("node", "job", "object"); only the
  /// head holds the control store.
  result<std::vector<table_row>> control_table(const std::string& table);

  /// Keeps node processes this one started; they are stopped after this node stops.
  void adopt(std::unique_ptr<worker_processes> children);

  /// Waits up to `timeout` until `n` nodes (this one included) are alive in the node
  /// table; returns how many are.
  size_t wait_for_nodes(size_t n, std::chrono::milliseconds timeout);

  /// Waits until a stop request arrives or `timeout` passes; true when asked to stop.
  bool wait_for_stop(std::chrono::milliseconds timeout);

  /// Runs `f` on the node's control actor, which may block (connects, lookups).
  void post(std::function<void()> f);

private:
  using key = object_key;
  using values_cb = std::function<void(result<std::vector<detail::boxed_value>>)>;
  using value_cb = std::function<void(result<detail::boxed_value>)>;
  using steady = std::chrono::steady_clock;

  // Where leases of results held on other nodes send their `object_free`; cut at
  // shutdown so late releases do nothing.
  struct release_sink {
    std::mutex mtx;
    wire_msg::transport* net = nullptr;
    std::function<void(const object_id&)> forget;
  };

  bool is_head() const { return self_.role == node_spec::role_type::head; }
  const std::string& head_name() const { return cfg_.head().name; }

  // -- what membership asks of this node (membership_port)
  // ---------------------------------------------------------------------------
  bool send(const std::string& peer, const wire_msg::message& m) override;
  bool connected(const std::string& peer) override;
  std::optional<std::chrono::milliseconds> quiet_for(const std::string& peer) override;
  void disconnect(const std::string& peer, const std::string& why) override;
  void dial(const std::string& peer) override;
  void rejoin() override;
  void record(const wire_msg::node_info& info) override { record_node(info); }
  void set_chain(std::vector<std::string> members) override;
  // `peer`'s connection closed: its objects and actors fail over, then the owner's
  // children there.
  void lost(const std::string& peer, const std::string& why) override;
  uint32_t queued() override { return static_cast<uint32_t>(local_inflight_.load()); }

  // -- network
  // ---------------------------------------------------------------------------
  void on_message(const std::string& peer, wire_msg::message&& m);
  // Sends at once when connected; otherwise connects on the control actor first.
  void send_to(const std::string& node, wire_msg::message m);
  result<void> connect_to(const std::string& node);
  void join_head();

  // -- tasks
  // -----------------------------------------------------------------------------
  void send_task(detail::task_ptr task, const std::string& to, bool placed);
  void run_locally(detail::task_ptr task);
  bool idle_elsewhere() const;
  void run_task_here(wire_msg::task_submit m);
  void forward_task(detail::task_ptr task, const std::string& to, wire_msg::task_submit m,
                    std::vector<key> exported);
  void place_and_forward(wire_msg::task_submit m);
  // Asks the head's global scheduler for a node; `then` runs on the scheduler.
  void place(const resource_set& demand, const std::vector<wire_msg::arg>& args,
             std::function<void(result<std::string>)> then);
  // A result the owner found stored on the node that made it: pulled into the task's
  // future, which keeps the holder's copy while it lives.
  void pull_result(detail::task_ptr task, const wire_msg::stored_at& where);
  void reply_when_done(const detail::slot_ptr& slot, const std::string& to);
  // A call that came from another node, keeping the owner's result id; its outcome goes
  // back to `reply_to`. Null (the error already sent) when `args` failed.
  detail::task_ptr incoming(std::string name, const detail::invoker* fn,
                            const std::vector<const detail::type_descriptor*>& params,
                            const detail::type_descriptor* result_type,
                            const object_id& id, const std::string& reply_to,
                            result<std::vector<detail::boxed_value>>& args);

  // -- objects
  // ---------------------------------------------------------------------------
  wire_msg::arg export_arg(const detail::task_arg& a, std::vector<key>& exported);
  void release_exports(const std::vector<key>& exported);
  void gather_args(const std::vector<wire_msg::arg>& args,
                   const std::vector<const detail::type_descriptor*>& params,
                   values_cb done);
  // Reads `ref` through the object manager; `done` runs on its thread.
  void fetch(const wire_msg::remote_ref& ref, const detail::type_descriptor* type,
             value_cb done);

  // -- actors
  // ----------------------------------------------------------------------------
  // Creates the actor here and answers its owner; on the head, one not yet placed is
  // placed by the global scheduler first.
  void create_actor_here(wire_msg::actor_create m);
  // Creates the actor `m` asks for on this node; its id here.
  result<uint64_t> host_actor(const wire_msg::actor_create& m);
  // Hosts `rec` as `id` for other nodes; returns once calls to it find it.
  void host(uint64_t id, detail::actor_record_ptr rec);
  // A record of an actor on another node, remembered so its node's death reaches it.
  std::shared_ptr<remote_actor_record>
  track(detail::actor_spec spec, const std::string& node, uint64_t id,
        std::optional<wire_msg::actor_create> created_by = std::nullopt);
  // Creates an actor lost with its node again, on a node the global scheduler picks.
  void restart_actor(const std::shared_ptr<remote_actor_record>& rec);
  // Sends the calls queued for `rec` whose arguments are ready, in order.
  void send_calls(const std::shared_ptr<remote_actor_record>& rec);
  void send_call(const std::shared_ptr<remote_actor_record>& rec, detail::task_ptr call);
  // The global scheduler's choice, waited for (on the head only).
  result<std::string> place_now(const resource_set& demand);
  void on_actor_call(wire_msg::actor_call&& m);
  void register_remote_name(const std::string& peer, const wire_msg::actor_register& m);
  void lookup_name(const std::string& peer, const wire_msg::actor_lookup& m);
  // Sends `m` to `node` with a fresh request id and waits for its answer.
  result<wire_msg::message> request(const std::string& node, wire_msg::message m);

  // -- control store: the head keeps the node, job and object tables in its shards
  // -------------------------------------------------------------------------------------
  void record_node(wire_msg::node_info info);
  // Marks node rows restored from disk as not alive (the head just started).
  void forget_restored_liveness();
  // A job or object row, written on the head (sent there from other nodes).
  void publish(wire_msg::message row);
  void on_row(const wire_msg::job_info& j);
  void on_row(const wire_msg::object_location& o);
  void on_kv_request(const std::string& peer, wire_msg::kv_request m);
  // The node and job tables as the control store holds them, for `swarm status`.
  result<wire_msg::node_table> stored_table();

  // The node table as membership last published it, ages as of now.
  wire_msg::node_table table_snapshot() const;
  void on_stop(const wire_msg::stop_request& m);
  // Stops the actors that call into this node (membership, the control-store client,
  // the object manager, the actor directory, the owner, the agent, the global
  // scheduler), in that order.
  void stop_actors();
  // This node's row as it joins.
  wire_msg::node_info self_info() const;

  // First, so it goes last: child nodes stop after this one.
  std::unique_ptr<worker_processes> children_;
  cluster_config cfg_;
  node_spec self_;
  uint64_t index_ = 0;
  // Owner ids carry the node's index above bit 40, so ids are unique cluster-wide.
  std::atomic<uint64_t> next_owner_{1};
  std::atomic<uint64_t> next_seq_{1};
  // Tasks placed here and not finished; past the threshold, new work may spill.
  std::atomic<size_t> local_inflight_{0};
  size_t spill_threshold_ = 1;
  std::unique_ptr<local_node> local_;
  std::unique_ptr<wire_msg::transport> net_;
  std::shared_ptr<release_sink> releases_;
  caf::actor agent_;
  std::atomic<bool> rejoining_{false};
  caf::actor global_; // the head's global scheduler
  membership_view members_;
  hosted_table hosted_; // written by the directory
  std::atomic<uint64_t> next_actor_{1};
  membership_actor membership_;
  control_client_actor control_;
  object_manager_actor objects_;
  actor_directory_actor directory_;
  owner_ref owner_;

  // Held shared by handlers while they run; the destructor takes it alone to stop them.
  std::shared_mutex alive_mtx_;
  bool closing_ = false;
  // Handlers wait for it: nothing the network reports is handled before the node is built.
  std::promise<void> built_;
  std::shared_future<void> built_future_ = built_.get_future().share();

  std::mutex stop_mtx_;
  std::condition_variable stop_cv_;
  bool stop_requested_ = false;
};

} // namespace swarm::actors
