#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "actors/common/wall_clock.hpp"
#include "actors/common/wire_routes.hpp"
#include "actors/node/cluster_actors.hpp"
#include "actors/node/cluster_store.hpp"
#include "actors/node/cluster_tasks.hpp"
#include "actors/node/node_link.hpp"
#include "actors/observability/dashboard.hpp"
#include "actors/observability/node_metrics.hpp"
#include "actors/ownership/lent_refs.hpp"
#include "framework/cluster.hpp"
#include "framework/cluster_config.hpp"
#include "framework/detail/core.hpp"
#include "transport/endpoint.hpp"

namespace swarm::actors {

/// This process's node of a cluster: the in-process node (its system actors run the
/// work placed here), the TCP endpoint to the other nodes, and the cluster protocol.
///
/// Each part of the protocol is a role actor that owns its state: `membership`, the
/// `owner` of the tasks and calls sent elsewhere, the `control_client`, the
/// `object_manager`, the `actor_directory` (and on the head the global scheduler). The
/// network's handlers turn frames into messages for the one that owns their type. The
/// paths that turn a call of the node's API into messages are `cluster_tasks`,
/// `cluster_actors` and `cluster_store`; what they share is the `node_link`. This class
/// composes them: it starts and stops the parts in order, and each part adds the routes
/// of the messages it handles (`routes`).
class cluster_node final : public detail::core, private membership_port {
public:
  /// Starts node `node` of `cfg`: on TCP, or on the transport `make_transport` starts
  /// (a fake network in tests).
  cluster_node(const application& app, cluster_config cfg, const std::string& node,
               wire_msg::transport_factory make_transport = {});
  ~cluster_node() override;

  const application& app() const override { return local_->app(); }
  uint64_t new_owner_id() override { return link_.new_owner_id(); }
  object_id new_object_id(uint64_t owner) override;
  const resource_set& total_resources() const override {
    return local_->total_resources();
  }
  result<void> feasible(const resource_set& demand, const std::string& node,
                        const std::string& function) override {
    return tasks_->feasible(demand, node, function);
  }
  void submit(detail::task_ptr task) override { tasks_->submit(std::move(task)); }
  bool cancel(detail::task_spec& task) override;
  result<std::unique_ptr<detail::store_lease>>
  admit(const object_id& id, const detail::boxed_value& v) override;
  detail::value_pool* pool() override { return local_->pool(); }
  std::shared_ptr<detail::device_memory> devices() override { return local_->devices(); }
  void replicate(const detail::slot_ptr& slot, uint32_t copies) override {
    link_.replicate(slot, copies);
  }
  result<detail::actor_record_ptr> spawn(detail::actor_spec spec) override {
    return actors_->spawn(std::move(spec));
  }
  void call(detail::actor_record& target, detail::task_ptr call) override {
    actors_->call(target, std::move(call));
  }
  void kill(detail::actor_record& target, bool restart) override {
    actors_->kill(target, restart);
  }
  result<detail::actor_record_ptr> find_actor(const std::string& name) override {
    return actors_->find_actor(name);
  }
  result<void> create_group(uint64_t id, const placement_group_options& o) override;
  result<detail::group_placement> wait_group(uint64_t id,
                                             std::chrono::milliseconds timeout) override;
  result<void> remove_group(uint64_t id) override;
  detail::actor_address address_of(const detail::actor_record_ptr& target) override {
    return actors_->address_of(target);
  }
  result<detail::actor_record_ptr> actor_at(const detail::actor_address& addr) override {
    return actors_->actor_at(addr);
  }
  void lend(const detail::slot_ptr& slot) override;
  result<detail::slot_ptr> borrow(const object_id& id,
                                  const detail::type_descriptor& type) override;
  result<std::optional<std::vector<uint8_t>>>
  kv(detail::kv_op op, const std::string& name, std::vector<uint8_t> value) override {
    return store_->kv(op, name, std::move(value));
  }
  result<detail::group_record_ptr> supervise(const detail::group_spec& spec) override {
    return local_->supervise(spec);
  }
  node_stats stats() override;
  const cluster_config* cluster() const override { return &link_.cfg; }
  const std::string& node_name() const override { return link_.self.name; }
  void job_event(uint64_t id, bool running) override { store_->job_event(id, running); }
  void output(const detail::task_spec* task, std::string_view text) override;

  /// What `swarm list WHAT` shows of this node (tasks, actors, objects, ...).
  result<std::vector<wire_msg::list_row>> list(const std::string& what) {
    return local_->list(what);
  }

  /// The rows of the control-store table `table` ("node", "job", "object"); only the
  /// head holds the control store.
  result<std::vector<table_row>> control_table(const std::string& table) {
    return store_->control_table(table);
  }

  /// Keeps what must outlive this node, such as the node processes it started (a local
  /// cluster's workers): it is released after this node stops.
  void adopt(std::shared_ptr<void> children);

  /// What a stop of this node is doing now, set as its destructor goes: for a watchdog
  /// that names the step a stop hangs in. It outlives the node.
  using stop_step = std::shared_ptr<std::atomic<const char*>>;
  void report_stop_steps(stop_step step) { stop_step_ = std::move(step); }

  /// Waits up to `timeout` until `n` nodes (this one included) are alive in the node
  /// table; returns how many are.
  size_t wait_for_nodes(size_t n, std::chrono::milliseconds timeout) override;

  /// The nodes alive in this node's view of the node table, this one included; a node
  /// that said it is stopping is not among them.
  std::vector<std::string> alive_nodes() const;

  /// Waits until a stop request arrives or `timeout` passes; true when asked to stop.
  bool wait_for_stop(std::chrono::milliseconds timeout);

  /// Where each kind of wire message arriving here goes, and how it runs there.
  const wire_routes& routes() const { return routes_; }

  /// The node's log.
  const node_log& log() const { return local_->log(); }
  void warn(const std::string& line) const override { local_->log().warn(line); }

  /// The port its metrics are served on; 0 when they are not.
  uint16_t metrics_port() const { return metrics_ ? metrics_->port() : 0; }

  /// The port the head serves its dashboard on; 0 when it does not.
  uint16_t dashboard_port() const { return dashboard_ ? dashboard_->port() : 0; }

  /// Why the head stopped this node when it refused it (empty for a plain stop).
  std::string stop_reason() const;

private:
  using steady = std::chrono::steady_clock;

  bool is_head() const { return link_.is_head(); }
  // Sends a placement-group request to the head and waits for its answer.
  // `wait`: how long the head may hold its answer (a wait until placed).
  result<detail::group_placement> ask_head(wire_msg::group_ask m,
                                           std::chrono::milliseconds wait = {});
  // The head answers another node's placement-group request.
  void on_group_ask(const std::string& peer, const wire_msg::group_ask& m);
  const std::string& head_name() const { return link_.head_name(); }

  // -- what membership asks of this node (membership_port)
  // ---------------------------------------------------------------------------
  bool send(const std::string& peer, const wire_msg::message& m) override;
  std::vector<std::string> send_all(const std::vector<std::string>& peers,
                                    const wire_msg::message& m) override {
    return net_->send_all(peers, m);
  }
  bool connected(const std::string& peer) override;
  std::optional<std::chrono::milliseconds> quiet_for(const std::string& peer) override;
  void disconnect(const std::string& peer, const std::string& why) override;
  void dial(const std::string& peer) override;
  void rejoin() override;
  void record(const wire_msg::node_info& info) override { store_->record_node(info); }
  void forget(const std::string& node) override { store_->forget_node(node); }
  void set_chain(std::vector<std::string> members) override;
  void set_kv_placement(const wire_msg::kv_placement& p) override;
  uint64_t kv_placement_version() override;
  // `peer`'s connection closed: its objects and actors fail over, then the owner's
  // children there.
  void lost(const std::string& peer, const std::string& why) override;
  uint32_t queued() override { return tasks_->queued(); }
  wire_msg::store_usage store() override;
  caf::actor scheduler() override { return local_->scheduler(); }
  // The head found this life dead: what it hosted for others stops, and it joins again.
  void fenced(uint64_t life, const std::string& why) override;

  // -- life cycle and dispatch
  // ---------------------------------------------------------------------------
  // Starts the role actors in order: membership, the control-store client, the object
  // manager, the owner, the actor directory.
  void start_actors();
  // The head's autoscaler, with an [autoscaler] in the file.
  void start_autoscaler();
  // Stops the actors that call into this node (membership, the control-store client,
  // the object manager, the actor directory, the owner, the agent, the global
  // scheduler), in that order.
  void stop_actors();
  // Drops the role actors' handles, which must not outlive the actor system.
  void drop_handles();
  // The node stops: the results it holds for other nodes go to their owners' copies
  // (bounded by a quarter of the stop timeout). Says what it did.
  std::string hand_over_results();
  // The node stops: the owners of the actors it hosts learn that they move.
  void tell_owners_actors_move();
  // The node stops: each checkpointing actor it hosts for another node sends its owner
  // its state now (bounded). How many did.
  size_t save_hosted_states();
  // Adds the routes of the messages the node's own parts handle, and those of its
  // subsystems.
  void add_routes();
  void on_message(const std::string& peer, wire_msg::message&& m);
  void join_head();
  // This node's row as it joins.
  wire_msg::node_info self_info() const;
  // Its join: the row, and the key-value placement it holds (a restarted head's cue).
  wire_msg::join join_message() const;
  // Adds the cluster's numbers to a scrape: the node's own, traffic by lane, nodes.
  void collect(metric_set& out);
  // The nodes the head's autoscaler started and the types it failed to (none without
  // one), asked of it (bounded).
  std::vector<wire_msg::node_launch> autoscaled();
  // The node table as membership last published it, ages as of now.
  wire_msg::node_table table_snapshot() const;
  // The head's answer to a program joining as a client, or a node joining by address:
  // refused when a live node has its name.
  wire_msg::client_welcome welcome_client(const wire_msg::client_ask& ask);
  void on_stop(const wire_msg::stop_request& m);
  // Adds the last pulls from other nodes to a "timeline" list.
  void add_transfers(std::vector<wire_msg::list_row>& rows);

  // First, so it goes last: child nodes stop after this one.
  std::shared_ptr<void> children_;
  stop_step stop_step_;
  // Before the link, so the role actors' handles in it go before the actor system.
  std::unique_ptr<local_node> local_;
  node_link link_;
  std::atomic<uint64_t> next_seq_{1};
  // Where the network receives pulled chunks: shared by its I/O threads and the object
  // manager.
  std::shared_ptr<wire_msg::landing_table> landings_ =
      std::make_shared<wire_msg::landing_table>();
  std::unique_ptr<wire_msg::transport> net_;
  // Stopped first: a scrape asks the parts below.
  std::unique_ptr<node_metrics> metrics_;
  caf::actor jobs_; // the head's job runner
  caf::actor autoscaler_;               // the head's, with an [autoscaler] in the file
  std::vector<std::string> file_nodes_; // the file's nodes, by owner index - 1
  std::atomic<uint64_t> fenced_{0}; // lives of this node the head found dead
  std::unique_ptr<dashboard> dashboard_;
  std::unique_ptr<cluster_store> store_;
  std::unique_ptr<cluster_tasks> tasks_;
  std::unique_ptr<cluster_actors> actors_;
  std::atomic<bool> rejoining_{false};
  wire_routes routes_{[this](std::function<void()> f) { link_.post(std::move(f)); }};
  // Objects owned here whose refs were written into values.
  lent_refs lent_;

  // Handlers wait for it: nothing the network reports is handled before the node is
  // built.
  std::promise<void> built_;
  std::shared_future<void> built_future_ = built_.get_future().share();

  // One-shot stop guard: an I/O thread sets the request, and the process's main thread
  // (serve, join_head) waits on stop_cv_ for it, outside any actor.
  mutable std::mutex stop_mtx_;
  std::condition_variable stop_cv_;
  bool stop_requested_ = false;
  std::string stop_reason_;
};

} // namespace swarm::actors
