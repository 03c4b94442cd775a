#include "actors/cluster_node.hpp"
#include "actors/global_scheduler.hpp"
#include "actors/messages.hpp"
#include "actors/remote_actor_record.hpp"
#include "actors/worker_processes.hpp"

#include <caf/all.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <thread>

#include "framework/detail/wire_convert.hpp"

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::function<void()>)

namespace swarm::actors {

namespace {

using namespace std::chrono_literals;
using detail::from_list;
using detail::key_of;
using detail::to_list;
using detail::to_wire;


using run_fn_atom = caf::atom_constant<caf::atom("runfn")>;

/// Runs posted functions off the I/O thread (they may block: connects, lookups). It takes
/// its node although it does not need it: CAF 0.17 binds a null argument tuple for a
/// function actor spawned with none (UBSan).
caf::behavior agent(caf::event_based_actor*, cluster_node*) {
  return {
      [](run_fn_atom, const std::function<void()>& f) { f(); },
  };
}

} // namespace

// -- life cycle -------------------------------------------------------------------------

cluster_node::cluster_node(const application& app, cluster_config cfg,
                           const std::string& node, wire_msg::transport_factory make_transport)
    : cfg_(std::move(cfg)) {
  auto spec = cfg_.find(node);
  if (!spec) throw failure{spec.err()};
  self_ = **spec;
  index_ = static_cast<uint64_t>(*spec - cfg_.nodes.data());
  local_ = std::make_unique<local_node>(app, cfg_.runtime_for(self_), this);
  // Before the network starts: its handlers feed the global scheduler.
  if (is_head()) global_ = spawn_global_scheduler(local_->system());
  spill_threshold_ = static_cast<size_t>(2 * local_->total_resources().get("CPU")) + 1;
  releases_ = std::make_shared<release_sink>();

  wire_msg::endpoint_config ec;
  ec.name = self_.name;
  ec.secret = cfg_.secret;
  ec.listen_address = self_.address;
  ec.listen_port = self_.port;
  ec.max_frame_bytes = cfg_.max_message_bytes + (1 << 20);
  wire_msg::endpoint_handlers h;
  h.on_message = [this](const std::string& peer, wire_msg::message&& m) {
    built_future_.wait();
    std::shared_lock<std::shared_mutex> alive{alive_mtx_};
    if (!closing_) on_message(peer, std::move(m));
  };
  h.on_peer_down = [this](const std::string& peer, const std::string& why) {
    built_future_.wait();
    std::shared_lock<std::shared_mutex> alive{alive_mtx_};
    if (!closing_) caf::anon_send(membership_, down_atom::value, peer, why);
  };
  h.log = [name = self_.name](const std::string& line) {
    std::fprintf(stderr, "[swarm %s] %s\n", name.c_str(), line.c_str());
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
    throw failure{{ep.err().code, "node '" + self_.name + "': " + ep.err().message}};
  net_ = std::move(*ep);
  {
    std::lock_guard<std::mutex> guard{releases_->mtx};
    releases_->net = net_.get();
    releases_->forget = [this](const object_id& id) {
      caf::anon_send(objects_, forget_atom::value, key_of(id));
    };
  }
  // Until the gate opens, the network's handlers wait; on a failure they find the node
  // closing.
  bool gate_open = false;
  try {
    local_->chain_link()->set(self_.name,
                              [this](const std::string& to, wire_msg::gcs_chain m) {
                                std::shared_lock<std::shared_mutex> alive{alive_mtx_};
                                if (!closing_) send_to(to, std::move(m));
                              });
    if (is_head()) {
      record_node(self_info());
      forget_restored_liveness();
    }
    // Joining happens below: the membership's ticks do not join again meanwhile.
    rejoining_ = !is_head();
    agent_ = local_->system().spawn<caf::detached>(agent, this);
    membership_config mc;
    mc.self = self_info();
    mc.head = head_name();
    for (auto& n : cfg_.nodes)
      mc.nodes.push_back(n.name);
    mc.replication = cfg_.gcs_replication;
    mc.heartbeat_interval = cfg_.heartbeat_interval;
    mc.node_timeout = cfg_.node_timeout;
    membership_ = spawn_membership(local_->system(), std::move(mc), *this, members_);
    control_client_config cc;
    cc.node = self_.name;
    cc.pid = static_cast<uint32_t>(::getpid());
    auto send = [this](const std::string& to, wire_msg::message m) {
      send_to(to, std::move(m));
    };
    cc.send = send;
    cc.publish = [this](wire_msg::job_info j) { publish(std::move(j)); };
    control_ = spawn_control_client(local_->system(), std::move(cc));
    object_manager_config oc;
    oc.node = self_.name;
    for (auto& n : cfg_.nodes)
      oc.nodes.push_back(n.name);
    oc.send = send;
    oc.publish = [this](wire_msg::object_location row) { publish(std::move(row)); };
    objects_ = spawn_object_manager(local_->system(), std::move(oc));
    owner_config wc;
    wc.node = self_.name;
    wc.send = send;
    wc.release = [this](std::vector<key> exported) { release_exports(exported); };
    // Off the thread running the owner: resubmitting may encode large arguments.
    wc.resubmit = [this](detail::task_ptr t) { post([this, t] { submit(t); }); };
    wc.call = [this](std::shared_ptr<remote_actor_record> rec, detail::task_ptr t) {
      post([this, rec, t] { call(*rec, t); });
    };
    wc.restart = [this](std::shared_ptr<remote_actor_record> rec) {
      post([this, rec] { restart_actor(rec); });
    };
    wc.pull = [this](detail::task_ptr t, wire_msg::stored_at where) {
      pull_result(std::move(t), where);
    };
    owner_ = owner_ref{spawn_owner(local_->system(), std::move(wc))};
    actor_directory_config dc;
    dc.node = self_.name;
    dc.restart = [this](std::shared_ptr<remote_actor_record> r) {
      post([this, r] { restart_actor(r); });
    };
    dc.then_lost = [this](const std::string& peer, const std::string& why) {
      owner_.lost(peer, why);
    };
    dc.kill = [this](detail::actor_record_ptr rec) { local_->kill(*rec, false); };
    dc.hosted = &hosted_;
    directory_ = spawn_actor_directory(local_->system(), std::move(dc));
    built_.set_value();
    gate_open = true;
    if (!is_head()) join_head();
    rejoining_ = false;
  } catch (...) {
    // The destructor will not run: stop what calls into this node before its parts go.
    stop_actors();
    {
      std::unique_lock<std::shared_mutex> alive{alive_mtx_};
      closing_ = true;
    }
    if (!gate_open) built_.set_value();
    throw;
  }
}

wire_msg::node_info cluster_node::self_info() const {
  wire_msg::node_info me;
  me.name = self_.name;
  me.address = self_.address;
  me.port = self_.port;
  me.head = is_head();
  me.total = to_list(local_->total_resources());
  me.available = me.total;
  return me;
}

void cluster_node::stop_actors() {
  // The global scheduler's handle stays (the network's handlers may still read it; what
  // they send is dropped); the agent's goes, or its detached thread would outlive the
  // system.
  auto stop = [this](const auto& a) {
    if (!a) return;
    caf::scoped_actor self{local_->system()};
    self->send_exit(a, caf::exit_reason::user_shutdown);
    self->wait_for(a);
  };
  stop(membership_);
  stop(control_);
  stop(objects_);
  stop(directory_);
  stop(owner_.handle());
  stop(agent_);
  stop(global_);
  agent_ = nullptr;
}

cluster_node::~cluster_node() {
  {
    std::lock_guard<std::mutex> guard{releases_->mtx};
    releases_->net = nullptr;
    releases_->forget = nullptr;
  }
  // Membership, the agent and the global scheduler call into this node: they go first.
  stop_actors();
  {
    std::unique_lock<std::shared_mutex> alive{alive_mtx_};
    closing_ = true;
  }
  membership_ = nullptr;
  control_ = nullptr;
  objects_ = nullptr;
  directory_ = nullptr;
  owner_ = owner_ref{};
  // Work that came from other nodes and still runs here: its owners learn it failed.
  hosted_.clear();
  // Tasks finishing while the node stops still report through this node: it stays whole
  // until they are done.
  local_->stop();
  local_.reset();
  net_.reset();
}

node_stats cluster_node::stats() {
  auto s = local_->stats();
  caf::scoped_actor self{local_->system()};
  self->request(objects_, std::chrono::seconds(5), count_atom::value)
      .receive([&](uint64_t n) { s.pulled_entries = n; }, [](caf::error&) {});
  return s;
}

void cluster_node::post(std::function<void()> f) {
  // Before the agent runs (while joining) there is nothing to post to; what is posted
  // then (dialing peers of a node table) is redone on the next table.
  if (agent_) caf::anon_send(agent_, run_fn_atom::value, std::move(f));
}

void cluster_node::adopt(std::unique_ptr<worker_processes> children) {
  children_ = std::move(children);
}

size_t cluster_node::wait_for_nodes(size_t n, std::chrono::milliseconds timeout) {
  auto deadline = steady::now() + timeout;
  while (true) {
    size_t alive = 0;
    auto peers = members_.get();
    for (auto& [name, p] : *peers)
      alive += p.info.alive || name == self_.name ? 1 : 0;
    if (alive >= n || steady::now() >= deadline) return alive;
    std::this_thread::sleep_for(10ms);
  }
}

bool cluster_node::wait_for_stop(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> guard{stop_mtx_};
  return stop_cv_.wait_for(guard, timeout, [this] { return stop_requested_; });
}

uint64_t cluster_node::new_owner_id() {
  return ((index_ + 1) << owner_index_shift) | next_owner_.fetch_add(1);
}

object_id cluster_node::new_object_id(uint64_t owner) {
  return {owner, next_seq_.fetch_add(1)};
}

result<std::unique_ptr<detail::store_lease>>
cluster_node::admit(const object_id& id, const detail::boxed_value& v) {
  return local_->admit(id, v);
}

bool cluster_node::cancel(detail::task_spec& task) {
  return local_->cancel(task);
}

result<detail::group_record_ptr> cluster_node::supervise(const detail::group_spec& spec) {
  return local_->supervise(spec);
}

// -- network ----------------------------------------------------------------------------

result<void> cluster_node::connect_to(const std::string& node) {
  if (net_->connected(node)) return {};
  auto spec = cfg_.find(node);
  if (!spec) return error{errc::node_unreachable, spec.err().message};
  auto peer = net_->connect(node, (*spec)->address, (*spec)->port, 5s);
  if (!peer)
    return error{peer.err().code, "cannot reach node '" + node + "': " + peer.err().message};
  if (*peer != node)
    return error{errc::node_unreachable,
                 (*spec)->address + ":" + std::to_string((*spec)->port) + " is node '" +
                     *peer + "', not '" + node + "'"};
  return {};
}

void cluster_node::send_to(const std::string& node, wire_msg::message m) {
  if (node == self_.name) {
    on_message(node, std::move(m));
    return;
  }
  if (net_->send(node, m)) return;
  post([this, node, m = std::move(m)]() mutable {
    if (auto ok = connect_to(node); !ok) {
      std::fprintf(stderr, "[swarm %s] %s\n", self_.name.c_str(), ok.err().message.c_str());
      // A task or call that cannot be delivered fails its owner.
      if (auto* t = std::get_if<wire_msg::task_submit>(&m))
        owner_.result({}, {t->result, to_wire(error{errc::node_unreachable, ok.err().message})});
      else if (auto* c = std::get_if<wire_msg::actor_call>(&m))
        owner_.result({}, {c->result, to_wire(error{errc::node_unreachable, ok.err().message})});
      return;
    }
    (void)net_->send(node, m);
  });
}

void cluster_node::join_head() {
  // The head may start after this node: retry for a while, then give up loudly.
  auto deadline = steady::now() + 30s;
  result<void> ok = error{errc::node_unreachable, "not tried"};
  while (steady::now() < deadline) {
    if (wait_for_stop(std::chrono::milliseconds(0)))
      throw failure{{errc::runtime_stopped,
                     "node '" + self_.name + "' was stopped before it joined the head"}};
    ok = connect_to(head_name());
    if (ok || ok.err().message.find("secret") != std::string::npos) break;
    std::this_thread::sleep_for(100ms);
  }
  if (!ok)
    throw failure{{errc::node_unreachable, "node '" + self_.name +
                                               "' cannot join the head '" + head_name() +
                                               "': " + ok.err().message}};
  (void)net_->send(head_name(), wire_msg::join{self_info()});
}

// -- what membership asks of this node ---------------------------------------------------

bool cluster_node::send(const std::string& peer, const wire_msg::message& m) {
  return static_cast<bool>(net_->send(peer, m));
}

bool cluster_node::connected(const std::string& peer) {
  return net_->connected(peer);
}

std::optional<std::chrono::milliseconds> cluster_node::quiet_for(const std::string& peer) {
  return net_->quiet_for(peer);
}

void cluster_node::disconnect(const std::string& peer, const std::string& why) {
  net_->disconnect(peer, why);
}

void cluster_node::dial(const std::string& peer) {
  post([this, peer] { (void)connect_to(peer); });
}

void cluster_node::rejoin() {
  // Joining again may block (a connect): the agent does it, one attempt at a time.
  if (rejoining_.exchange(true)) return;
  post([this] {
    if (connect_to(head_name())) (void)net_->send(head_name(), wire_msg::join{self_info()});
    rejoining_ = false;
  });
}

void cluster_node::set_chain(std::vector<std::string> members) {
  local_->set_chain(std::move(members));
}

void cluster_node::lost(const std::string& peer, const std::string& why) {
  // Pulls from there fail, results located there count as gone, results held here for
  // owners there go.
  caf::anon_send(objects_, lost_atom::value, peer, why);
  // Actors this node created there restart elsewhere, and calls to them wait for that;
  // then the rest fails over.
  caf::anon_send(directory_, lost_atom::value, peer, why);
}

void cluster_node::on_message(const std::string& peer, wire_msg::message&& m) {
  std::visit(
      [&](auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, wire_msg::task_submit>) {
          if (x.placed || !is_head())
            run_task_here(std::move(x));
          else
            place_and_forward(std::move(x));
        } else if constexpr (std::is_same_v<T, wire_msg::task_result>) {
          owner_.result(peer, std::move(x));
        } else if constexpr (std::is_same_v<T, wire_msg::actor_call>) {
          on_actor_call(std::move(x));
        } else if constexpr (std::is_same_v<T, wire_msg::object_pull>) {
          caf::anon_send(objects_, pull_atom::value, peer, x);
        } else if constexpr (std::is_same_v<T, wire_msg::object_chunk>) {
          caf::anon_send(objects_, chunk_atom::value, std::move(x));
        } else if constexpr (std::is_same_v<T, wire_msg::object_free>) {
          caf::anon_send(objects_, free_atom::value, key_of(x.id));
        } else if constexpr (std::is_same_v<T, wire_msg::heartbeat>) {
          caf::anon_send(membership_, heartbeat_atom::value, peer, x.queued);
        } else if constexpr (std::is_same_v<T, wire_msg::join>) {
          if (x.node.name == peer)
            caf::anon_send(membership_, join_atom::value, std::move(x.node));
          else
            std::fprintf(stderr, "[swarm %s] node '%s' asked to join as '%s': ignored\n",
                         self_.name.c_str(), peer.c_str(), x.node.name.c_str());
        } else if constexpr (std::is_same_v<T, wire_msg::node_table>) {
          // Only the head's table is the truth.
          if (peer == head_name()) caf::anon_send(membership_, table_atom::value, std::move(x));
        } else if constexpr (std::is_same_v<T, wire_msg::status_request>) {
          if (!is_head()) {
            send_to(peer, table_snapshot());
          } else {
            post([this, peer] {
              auto t = stored_table();
              send_to(peer, t ? std::move(*t) : table_snapshot());
            });
          }
        } else if constexpr (std::is_same_v<T, wire_msg::job_info> ||
                             std::is_same_v<T, wire_msg::object_location>) {
          on_row(x);
        } else if constexpr (std::is_same_v<T, wire_msg::stop_request>) {
          on_stop(x);
        } else if constexpr (std::is_same_v<T, wire_msg::actor_create>) {
          post([this, x]() { create_actor_here(x); });
        } else if constexpr (std::is_same_v<T, wire_msg::actor_register>) {
          post([this, peer, x]() { register_remote_name(peer, x); });
        } else if constexpr (std::is_same_v<T, wire_msg::actor_lookup>) {
          post([this, peer, x]() { lookup_name(peer, x); });
        } else if constexpr (std::is_same_v<T, wire_msg::actor_created> ||
                             std::is_same_v<T, wire_msg::actor_location> ||
                             std::is_same_v<T, wire_msg::kv_reply>) {
          // Answers to this node's requests.
          auto id = x.request_id;
          caf::anon_send(control_, answer_atom::value, id, wire_msg::message{std::move(x)});
        } else if constexpr (std::is_same_v<T, wire_msg::actor_checkpoint>) {
          caf::anon_send(directory_, checkpoint_atom::value, peer, std::move(x));
        } else if constexpr (std::is_same_v<T, wire_msg::gcs_chain>) {
          auto shard = x.shard;
          if (!local_->chain_message(std::move(x)))
            std::fprintf(stderr, "[swarm %s] chain message from '%s' for shard %u dropped: "
                                 "this node has %zu\n",
                         self_.name.c_str(), peer.c_str(), shard, cfg_.gcs_shards);
        } else if constexpr (std::is_same_v<T, wire_msg::kv_request>) {
          on_kv_request(peer, std::move(x));
        } else if constexpr (std::is_same_v<T, wire_msg::actor_kill>) {
          caf::anon_send(directory_, unhost_atom::value, x.actor_id);
        } else {
          // hello and proof never get here: the endpoint consumes them.
        }
      },
      m);
}

// -- control: the node table, stop ------------------------------------------------------

void cluster_node::place(const resource_set& demand, const std::vector<wire_msg::arg>& args,
                         std::function<void(result<std::string>)> then) {
  placement_request req;
  req.demand = demand;
  for (auto& a : args)
    if (auto* r = std::get_if<wire_msg::remote_ref>(&a))
      req.input_bytes.emplace_back(r->node, r->size);
  req.then = std::move(then);
  caf::anon_send(global_, place_atom::value, std::move(req));
}

wire_msg::node_table cluster_node::table_snapshot() const {
  return to_node_table(*members_.get(), caf::actor_clock::clock_type::now());
}

void cluster_node::on_stop(const wire_msg::stop_request& m) {
  if (is_head() && (m.node.empty() || m.node != self_.name)) {
    std::vector<std::string> targets;
    auto peers = members_.get();
    for (auto& [name, p] : *peers)
      if (name != self_.name && p.info.alive && (m.node.empty() || name == m.node))
        targets.push_back(name);
    for (auto& n : targets)
      send_to(n, wire_msg::stop_request{n});
    if (!m.node.empty()) return;
  }
  std::lock_guard<std::mutex> guard{stop_mtx_};
  stop_requested_ = true;
  stop_cv_.notify_all();
}

} // namespace swarm::actors
