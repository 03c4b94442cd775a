#include "actors/node/cluster_node.hpp"

#include "actors/common/foreign_thread.hpp"
#include "actors/control_store/protocol.hpp"
#include "actors/node/autoscaler.hpp"
#include "actors/node/job_runner.hpp"
#include "actors/observability/dashboard_snapshot.hpp"
#include "actors/scheduling/global_scheduler.hpp"
#include "actors/scheduling/protocol.hpp"
#include "actors/user_actors/remote_actor_record.hpp"

#include <caf/all.hpp>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "base/fd_limit.hpp"
#include "framework/detail/wire_convert.hpp"

namespace swarm::actors {

namespace {

using namespace std::chrono_literals;
using detail::key_of;
using detail::to_list;

// The nodes in the node table that are not in the file, by owner index.
joined_names joined_names_of(const membership_view& members) {
  return [&members](uint64_t owner_index) {
    auto table = members.get(); // held: a publish may drop the last other hold
    for (auto& [name, p] : *table)
      if (p.info.owner_index == owner_index) return name;
    return std::string{};
  };
}

} // namespace

// -- life cycle -------------------------------------------------------------------------

cluster_node::cluster_node(const application& app, cluster_config cfg,
                           const std::string& node,
                           wire_msg::transport_factory make_transport)
    : link_(std::move(cfg), node) {
  local_ = std::make_unique<local_node>(app, link_.cfg.runtime_for(link_.self), this);
  link_.local = local_.get();
  link_.values = this;
  // Before the network starts: its handlers feed the global scheduler.
  if (is_head()) link_.global = spawn_global_scheduler(local_->system());
  store_ = std::make_unique<cluster_store>(link_);
  tasks_ = std::make_unique<cluster_tasks>(
      link_, [this](wire_msg::message row) { store_->publish(std::move(row)); });
  actors_ = std::make_unique<cluster_actors>(link_);
  add_routes();
  link_.deliver_here = [this](const std::string& peer, wire_msg::message&& m) {
    on_message(peer, std::move(m));
  };

  wire_msg::endpoint_config ec;
  ec.name = link_.self.name;
  ec.secret = link_.cfg.secret;
  ec.tls = link_.cfg.tls;
  ec.listen_address = link_.self.address;
  ec.listen_port = link_.self.port;
  ec.listen = !link_.self.client; // a client dials every node; nobody dials it
  ec.max_frame_bytes = link_.cfg.max_message_bytes + (1 << 20);
  // Every node of the file may (re)connect at once, with its bulk connection.
  ec.max_handshaking = std::max<size_t>(64, 2 * link_.cfg.nodes.size());
  // A peer that stopped acknowledging (what this node sends no longer reaches it) is
  // down after twice the silence that finds a node dead: a frozen process's kernel still
  // acknowledges, so only a cut network trips it.
  ec.unacked_timeout = 2 * link_.cfg.node_timeout;
  if (!link_.self.client) {
    // A client keeps its connections: nobody could dial it back.
    ec.idle_close = link_.cfg.idle_connection;
    // A socket per peer (two while large values cross); the head holds one per node.
    auto open_files = raise_fd_limit();
    auto wanted = 2 * link_.cfg.nodes.size() + 256;
    if (open_files < wanted)
      local_->log().warn("node '" + link_.self.name + "' may open " +
                         std::to_string(open_files) +
                         " files (its hard limit, ulimit -Hn); a cluster of " +
                         std::to_string(link_.cfg.nodes.size()) + " nodes may need " +
                         std::to_string(wanted) + ": raise it");
  }
  wire_msg::endpoint_handlers h;
  // What the endpoint reports runs once the node is built and while it is not closing.
  // The endpoint's threads outlive the actor system (they stop last): what they run
  // leaves no hold on it (foreign_thread_guard).
  auto gated = [this](auto f, auto closed) {
    return [this, f, closed](auto&&... args) {
      foreign_thread_guard guard;
      built_future_.wait();
      std::shared_lock<std::shared_mutex> alive{link_.alive_mtx};
      if (!link_.closing)
        f(std::forward<decltype(args)>(args)...);
      else
        closed(std::forward<decltype(args)>(args)...);
    };
  };
  auto ignored = [](auto&&...) {};
  h.on_message = gated(
      [this](const std::string& peer, wire_msg::message&& m) {
        on_message(peer, std::move(m));
      },
      // A task that arrives while the node stops goes back to its owner, which places
      // it again: dropped, it would never end.
      [this](const std::string&, wire_msg::message&& m) {
        if (auto* t = std::get_if<wire_msg::task_submit>(&m))
          (void)net_->send(t->owner_node,
                           wire_msg::task_result{
                               t->result, detail::to_wire(error{
                                              errc::runtime_stopped,
                                              "node '" + link_.self.name +
                                                  "' is stopping; task '" + t->function +
                                                  "' was not run"})});
      });
  h.on_peer_up = gated([this](const std::string& peer) { link_.peer_up(peer); }, ignored);
  h.on_peer_down = gated(
      [this](const std::string& peer, const std::string& why) {
        caf::anon_send(link_.membership, down_atom::value, peer, why);
      },
      ignored);
  h.resolve = [this](const std::string& peer) { return link_.resolve(peer); };
  h.on_undelivered = gated(
      [this](const std::string& peer, std::vector<wire_msg::message>&& held,
             const std::string& why) {
        for (auto& m : held)
          link_.undelivered(peer, m, why);
      },
      ignored);
  h.land = [landings = landings_](const std::string& peer,
                                  const wire_msg::object_chunk& header, uint64_t size) {
    return landings->claim(peer, header.id, header.offset, size);
  };
  h.log = [log = local_->log()](log_level level, const std::string& line) {
    log.write(level, line);
  };
  if (!make_transport)
    make_transport = [](wire_msg::endpoint_config c, wire_msg::endpoint_handlers hs)
        -> result<std::unique_ptr<wire_msg::transport>> {
      auto e = wire_msg::endpoint::start(std::move(c), std::move(hs));
      if (!e) return e.err();
      return std::unique_ptr<wire_msg::transport>{std::move(*e)};
    };
  auto ep = make_transport(ec, std::move(h));
  if (!ep)
    throw failure{{ep.err().code, "node '" + link_.self.name + "': " + ep.err().message}};
  net_ = std::move(*ep);
  link_.net = net_.get();
  // Asked for any free port (a node joining by the head's address): its row says which.
  if (link_.self.port == 0 && ec.listen) {
    link_.self.port = net_->listening_port();
    for (auto& n : link_.cfg.nodes)
      if (n.name == link_.self.name) n.port = link_.self.port;
  }
  {
    std::lock_guard<std::mutex> guard{link_.releases->mtx};
    link_.releases->net = net_.get();
    link_.releases->self = link_.self.name;
    link_.releases->here = [this](const wire_msg::message& m) {
      link_.deliver_here(link_.self.name, wire_msg::message{m});
    };
    link_.releases->forget = [this](const object_id& id) {
      caf::anon_send(link_.objects, forget_atom::value, key_of(id));
    };
    link_.releases->freed = [this](const object_id& id) {
      caf::anon_send(link_.objects, freed_atom::value, key_of(id));
    };
  }
  // Until the gate opens, the network's handlers wait; on a failure they find the node
  // closing.
  bool gate_open = false;
  try {
    local_->gcs().chain_link()->set(link_.self.name,
                                    [this](const std::string& to, wire_msg::gcs_chain m) {
                                      link_.send_while_open(to, std::move(m));
                                    });
    if (is_head()) {
      store_->record_node(self_info());
      store_->forget_restored_liveness();
    }
    // Joining happens below: the membership's ticks do not join again meanwhile.
    rejoining_ = !is_head();
    start_actors();
    built_.set_value();
    gate_open = true;
    if (!is_head()) join_head();
    rejoining_ = false;
    if (auto rt = link_.cfg.runtime_for(link_.self); rt.metrics_port) {
      auto m = node_metrics::start(link_.self.name, rt.metrics_address, *rt.metrics_port,
                                   rt.http, [this](metric_set& out) { collect(out); });
      if (!m) throw failure{m.err()};
      metrics_ = std::move(*m);
    }
    if (is_head() && link_.self.dashboard_port) {
      // A client of the cluster, as `swarm status` is: it asks over the network.
      auto d = dashboard::start(
          link_.self.name, link_.self.address, *link_.self.dashboard_port, link_.cfg.http,
          [cfg = link_.cfg] { return dashboard_snapshot(cfg, std::chrono::seconds{2}); });
      if (!d) throw failure{d.err()};
      dashboard_ = std::move(*d);
    }
    auto at = [this](uint16_t port, const char* path) {
      return "http://" + link_.self.address + ":" + std::to_string(port) + path;
    };
    log().info("serving on " + link_.self.address + ":" +
               std::to_string(link_.self.port) + " (cluster '" + link_.cfg.name + "')" +
               (metrics_ ? ", metrics on " + at(metrics_->port(), "/metrics") : "") +
               (dashboard_ ? ", dashboard on " + at(dashboard_->port(), "/") : ""));
  } catch (...) {
    // The destructor will not run: stop what calls into this node before its parts go.
    dashboard_.reset();
    metrics_.reset();
    stop_actors();
    {
      std::unique_lock<std::shared_mutex> alive{link_.alive_mtx};
      link_.closing = true;
    }
    if (!gate_open) built_.set_value();
    throw;
  }
}

void cluster_node::start_actors() {
  auto& sys = local_->system();
  link_.start_agent();
  membership_config mc;
  mc.self = self_info();
  mc.head = head_name();
  // Owner indices 1..n name the file's nodes in its order; a node that joined otherwise
  // (a client, or by the head's address) has one the head gave it.
  for (auto& n : link_.cfg.nodes)
    if (!n.client && n.owner_index == 0) file_nodes_.push_back(n.name);
  mc.nodes = file_nodes_;
  mc.replication = link_.cfg.gcs_replication;
  mc.gcs_shards = link_.cfg.gcs_shards;
  mc.gcs_hosts = link_.cfg.gcs_hosts;
  mc.log = local_->log();
  mc.heartbeat_interval = link_.cfg.heartbeat_interval;
  mc.node_timeout = link_.cfg.node_timeout;
  link_.membership = spawn_membership(sys, std::move(mc), *this, link_.members);
  auto send = [this](const std::string& to, wire_msg::message m) {
    link_.send_to(to, std::move(m));
  };
  auto publish = [this](auto row) { store_->publish(std::move(row)); };
  control_client_config cc;
  cc.node = link_.self.name;
  cc.pid = static_cast<uint32_t>(::getpid());
  cc.send = send;
  cc.publish = publish;
  link_.control = spawn_control_client(sys, std::move(cc));
  object_manager_config oc;
  oc.node = link_.self.name;
  oc.nodes = file_nodes_;
  oc.joined = joined_names_of(link_.members);
  oc.send = send;
  oc.publish = publish;
  oc.pool = local_->pool();
  oc.landings = landings_;
  oc.values = this;
  if (local_->config().gpu_sharing) oc.devices = local_->devices();
  oc.warn = [log = local_->log()](const std::string& line) { log.warn(line); };
  oc.reserve = [local = local_.get()](const object_key& k, uint64_t bytes) {
    return local->admit_secondary({k.first, k.second}, bytes);
  };
  oc.cache = [store = local_->store_table_ptr()](std::weak_ptr<cached_copy> copy) {
    store->cache(std::move(copy));
  };
  oc.count_lookup = [store = local_->store_table_ptr()](bool hit) {
    store->count_lookup(hit);
  };
  oc.pick = [members = &link_.members,
             me = link_.self.name](size_t n, const std::set<std::string>& exclude) {
    return least_busy(*members->loads(), me, n,
                      [&](const peer_view& p) { return !exclude.count(p.info.name); });
  };
  oc.alive = [this](const std::string& node) { return link_.alive(node); };
  oc.earlier_owner = [this](uint64_t owner) { return link_.earlier_owner(owner); };
  oc.load = [members = &link_.members](const std::string& node) {
    auto table = members->loads();
    auto i = table->find(node);
    return i == table->end()
               ? 0.0
               : static_cast<double>(i->second.info.queued + i->second.info.running);
  };
  link_.objects = spawn_object_manager(sys, std::move(oc));
  owner_config wc;
  wc.node = link_.self.name;
  wc.log = local_->log();
  wc.values = this;
  wc.send = send;
  wc.release = [this](std::vector<object_key> exported) {
    link_.release_exports(exported);
  };
  // Off the thread running the owner: resubmitting may encode large arguments.
  wc.resubmit = [this](detail::task_ptr t) {
    link_.post([this, t] { tasks_->submit(t); });
  };
  wc.call = [this](std::shared_ptr<remote_actor_record> rec, detail::task_ptr t) {
    link_.post([this, rec, t] { actors_->call(*rec, t); });
  };
  auto restart = [this](std::shared_ptr<remote_actor_record> rec) {
    link_.post([this, rec] { actors_->restart_actor(rec); });
  };
  // Through the directory: the restart takes the actor's state after the states that
  // arrived before the call that found it lost.
  wc.restart = [this](std::shared_ptr<remote_actor_record> rec) {
    caf::anon_send(link_.directory, restart_atom::value, std::move(rec));
  };
  wc.vouch = [this](const std::string& from, wire_msg::task_result m) {
    caf::anon_send(link_.directory, checkpoint_atom::value, from, std::move(m));
  };
  // Ever joined: work for a node that died is failed over by its loss, not held back.
  wc.joined = [this](const std::string& peer) {
    return link_.members.get()->count(peer) > 0;
  };
  wc.join_wait = link_.cfg.join_wait;
  wc.alive = [this](const std::string& peer) { return link_.alive(peer); };
  wc.incarnation = [this](const std::string& peer) { return link_.incarnation_of(peer); };
  wc.pull = [this](detail::task_ptr t, wire_msg::stored_at where) {
    tasks_->pull_result(std::move(t), where);
  };
  wc.handed_over = [this](const std::string& from, wire_msg::objects_hand_over m) {
    caf::anon_send(link_.objects, hand_over_atom::value, from, std::move(m));
  };
  wc.pull_item = [this](detail::slot_ptr slot, const detail::type_descriptor* type,
                        wire_msg::stored_at where, double weight) {
    tasks_->pull_item(std::move(slot), type, where, weight);
  };
  auto& bc = wc.borrows;
  bc.node = link_.self.name;
  bc.nodes = file_nodes_;
  bc.joined = joined_names_of(link_.members);
  bc.send = send;
  bc.find = [this](const object_key& k) { return lent_.find(k); };
  bc.export_value = [this](const detail::slot_ptr& slot, std::vector<object_key>& held) {
    return link_.export_arg({{}, slot}, held);
  };
  bc.release = wc.release;
  bc.fetch = [this](const wire_msg::remote_ref& ref, const detail::type_descriptor* type,
                    std::function<void(result<detail::boxed_value>)> done) {
    link_.fetch(ref, type, std::move(done));
  };
  bc.borrows_made = [this] { return link_.borrows_made.load(std::memory_order_acquire); };
  bc.values = this;
  link_.owner = owner_ref{spawn_owner(sys, std::move(wc))};
  link_.streams = spawn_stream_senders(sys);
  if (is_head()) {
    job_runner_config jc;
    jc.address = link_.self.address + ":" + std::to_string(link_.self.port);
    jc.secret = link_.cfg.secret;
    jc.tls = link_.cfg.tls;
    jc.token = link_.cfg.jobs.token;
    jc.run_as = link_.cfg.jobs.run_as;
    jc.cluster = link_.cfg.name;
    jc.output_parent = std::filesystem::temp_directory_path().string();
    if (!link_.cfg.gcs_dir.empty())
      jc.output_dir = link_.cfg.gcs_dir + "/" + link_.self.name + "/jobs";
    jc.send = send;
    jobs_ = spawn_job_runner(sys, std::move(jc));
    if (link_.cfg.autoscaler.enabled()) start_autoscaler();
  }
  {
    std::lock_guard<std::mutex> guard{link_.releases->mtx};
    link_.releases->unborrow = [owner = link_.owner](const object_key& k) {
      owner.dropped(k);
    };
  }
  actor_directory_config dc;
  dc.node = link_.self.name;
  dc.log = local_->log();
  dc.restart = restart;
  dc.then_lost = [this](const std::string& peer, const std::string& why) {
    link_.owner.lost(peer, why);
  };
  dc.kill = [this](detail::actor_record_ptr rec) { local_->kill(*rec, false); };
  dc.send = send;
  dc.vouched = [this](const std::string& from, wire_msg::task_result m) {
    link_.owner.result(from, std::move(m));
  };
  dc.hosted = &link_.hosted;
  link_.directory = spawn_actor_directory(sys, std::move(dc));
}

void cluster_node::start_autoscaler() {
  autoscaler_setup as;
  as.cfg = link_.cfg.autoscaler;
  as.target.head_address = link_.self.address + ":" + std::to_string(link_.self.port);
  as.target.secret = link_.cfg.secret;
  as.target.tls = link_.cfg.tls;
  std::error_code ec;
  as.target.program = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  as.global = link_.global;
  as.members = &link_.members;
  as.stop = [this](const std::string& node, const std::string& why) {
    link_.send_while_open(node, wire_msg::stop_request{node, why});
  };
  as.log = local_->log();
  as.tick = link_.cfg.heartbeat_interval;
  as.stop_grace = link_.cfg.stop_timeout;
  auto a = spawn_autoscaler(local_->system(), std::move(as));
  if (!a)
    throw failure{{a.err().code,
                   "node '" + link_.self.name + "': the autoscaler: " + a.err().message}};
  autoscaler_ = std::move(*a);
}

wire_msg::join cluster_node::join_message() const {
  return join_of(self_info(), local_->gcs().kv_placement(), link_.members, head_name());
}

wire_msg::node_info cluster_node::self_info() const {
  wire_msg::node_info me;
  me.name = link_.self.name;
  me.address = link_.self.address;
  me.port = link_.self.port;
  me.head = is_head();
  me.client = link_.self.client;
  me.owner_index = link_.self.owner_index;
  me.incarnation = link_.life;
  me.node_type = link_.self.node_type;
  me.total = to_list(local_->total_resources());
  me.available = me.total;
  auto& app = local_->app();
  for (auto& f : app.function_names())
    me.functions.push_back({f, (*app.find_entry(f))->signature()});
  for (auto& a : app.actor_type_names())
    me.actor_types.push_back({a, app.actor_info(a)->signature()});
  return me;
}

namespace {

// A stored object's lease that, once it goes, tells the object manager (while the node
// runs): nodes this one sent copies to drop them.
class telling_lease final : public detail::store_lease {
public:
  telling_lease(std::unique_ptr<detail::store_lease> inner,
                std::shared_ptr<release_sink> sink, const object_id& id)
      : inner_(std::move(inner)), sink_(std::move(sink)), id_(id) {}
  ~telling_lease() override {
    inner_.reset();
    sink_->freed_here(id_);
  }

  void bind(std::weak_ptr<detail::object_slot> slot) override {
    inner_->bind(std::move(slot));
  }

  result<detail::restored_value> restore(const detail::type_descriptor& type) override {
    return inner_->restore(type);
  }

private:
  std::unique_ptr<detail::store_lease> inner_;
  std::shared_ptr<release_sink> sink_;
  object_id id_;
};

} // namespace

result<std::unique_ptr<detail::store_lease>>
cluster_node::admit(const object_id& id, const detail::boxed_value& v) {
  auto lease = local_->admit(id, v);
  if (!lease || !*lease) return lease;
  return std::unique_ptr<detail::store_lease>{
      std::make_unique<telling_lease>(std::move(*lease), link_.releases, id)};
}

wire_msg::store_usage cluster_node::store() {
  auto s = local_->store_accounting();
  return {s.bytes,       s.capacity,      s.secondary_bytes, s.pooled_bytes,
          s.pool_reuses, s.spilled_bytes, s.spills,          s.restores,
          s.cache_hits,  s.cache_misses,  s.evictions};
}

void cluster_node::lend(const detail::slot_ptr& slot) {
  if ((slot->id().owner >> owner_index_shift) == link_.index + 1) lent_.add(slot);
}

result<detail::slot_ptr> cluster_node::borrow(const object_id& id,
                                              const detail::type_descriptor& type) {
  auto k = key_of(id);
  auto owner = (id.owner >> owner_index_shift) - 1;
  if (owner != link_.index &&
      owner_node_of(k, file_nodes_, joined_names_of(link_.members)).empty())
    return error{errc::invalid_argument,
                 "node '" + link_.self.name + "' read a ref of object " + id.to_string() +
                     ", whose owner is no node of cluster '" + link_.cfg.name + "'"};
  if (owner == link_.index) {
    if (auto slot = lent_.find(k)) return slot;
    return error{errc::object_freed,
                 "object " + id.to_string() + " was freed on node '" + link_.self.name +
                     "', its owner, before a ref of it was read there"};
  }
  // Its borrow is given back as it goes (the sink is cut when this node stops).
  detail::slot_ptr slot{new detail::object_slot(id),
                        [sink = link_.releases, k](detail::object_slot* s) {
                          delete s;
                          sink->unborrowed(k);
                        }};
  link_.borrows_made.fetch_add(1, std::memory_order_acq_rel);
  link_.owner.borrow(slot, &type);
  return slot;
}

void cluster_node::adopt(std::shared_ptr<void> children) {
  children_ = std::move(children);
}

size_t cluster_node::wait_for_nodes(size_t n, std::chrono::milliseconds timeout) {
  auto deadline = steady::now() + timeout;
  auto alive = alive_nodes().size();
  if (alive >= n || timeout.count() <= 0) return alive;
  // Woken by each view membership publishes (watched before the view is read again, so
  // none is missed), not by polling.
  caf::scoped_actor self{local_->system()};
  caf::anon_send(link_.membership, watch_atom::value, caf::actor{self}, true);
  for (alive = alive_nodes().size(); alive < n && steady::now() < deadline;
       alive = alive_nodes().size()) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now());
    self->receive([](view_atom) {}, caf::after(std::max(0ms, left)) >> [] {});
  }
  caf::anon_send(link_.membership, watch_atom::value, caf::actor{self}, false);
  return alive;
}

std::vector<std::string> cluster_node::alive_nodes() const {
  std::vector<std::string> alive;
  auto peers = link_.members.get();
  for (auto& [name, p] : *peers)
    // Clients are no nodes of the cluster (but this one counts itself), and a node that
    // said it is stopping takes no more work: the head's status shows it dead already.
    if ((p.info.alive && !p.info.client && !p.info.leaving) || name == link_.self.name)
      alive.push_back(name);
  return alive;
}

bool cluster_node::wait_for_stop(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> guard{stop_mtx_};
  return stop_cv_.wait_for(guard, timeout, [this] { return stop_requested_; });
}

object_id cluster_node::new_object_id(uint64_t owner) {
  return {owner, next_seq_.fetch_add(1)};
}

} // namespace swarm::actors
