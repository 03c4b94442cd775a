#include "actors/cluster_node.hpp"
#include "actors/global_scheduler.hpp"
#include "actors/messages.hpp"
#include "actors/remote_actor_record.hpp"
#include "actors/worker_processes.hpp"

#include <caf/all.hpp>

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

constexpr int owner_shift = 40;

using tick_atom = caf::atom_constant<caf::atom("tick")>;
using run_fn_atom = caf::atom_constant<caf::atom("runfn")>;

/// Runs posted functions off the I/O thread (they may block: connects, lookups). It takes
/// its node although it does not need it: CAF 0.17 binds a null argument tuple for a
/// function actor spawned with none (UBSan).
caf::behavior agent(caf::event_based_actor*, cluster_node*) {
  return {
      [](run_fn_atom, const std::function<void()>& f) { f(); },
  };
}

/// Runs the periodic tick on a thread of its own, so heartbeats and failure verdicts never
/// wait behind a blocked agent or busy scheduler threads (the tick never blocks).
caf::behavior pacemaker(caf::event_based_actor* self, cluster_node* node,
                        std::chrono::milliseconds interval) {
  self->delayed_send(self, interval, tick_atom::value);
  return {
      [=](tick_atom) {
        node->tick();
        self->delayed_send(self, interval, tick_atom::value);
      },
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
    std::shared_lock<std::shared_mutex> alive{alive_mtx_};
    if (!closing_) on_message(peer, std::move(m));
  };
  h.on_peer_down = [this](const std::string& peer, const std::string& why) {
    std::shared_lock<std::shared_mutex> alive{alive_mtx_};
    if (!closing_) on_peer_down(peer, why);
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
      std::string holder;
      {
        std::lock_guard<std::mutex> g{mtx_};
        auto i = located_.find(key_of(id));
        if (i == located_.end()) return;
        holder = i->second.first;
        located_.erase(i);
      }
      publish(wire_msg::object_location{to_wire(id), holder, 0, false});
    };
  }
  {
    std::lock_guard<std::mutex> guard{mtx_};
    peer_entry me;
    me.info.name = self_.name;
    me.info.address = self_.address;
    me.info.port = self_.port;
    me.info.head = is_head();
    me.info.total = to_list(local_->total_resources());
    me.info.available = me.info.total;
    peers_[self_.name] = me;
  }
  local_->chain_link()->set(self_.name,
                            [this](const std::string& to, wire_msg::gcs_chain m) {
                              std::shared_lock<std::shared_mutex> alive{alive_mtx_};
                              if (!closing_) send_to(to, std::move(m));
                            });
  if (is_head()) {
    wire_msg::node_info me;
    {
      std::lock_guard<std::mutex> guard{mtx_};
      me = peers_[self_.name].info;
    }
    record_node(std::move(me));
    forget_restored_liveness();
  }
  if (!is_head()) join_head();
  agent_ = local_->system().spawn<caf::detached>(agent, this);
  pacemaker_ =
      local_->system().spawn<caf::detached>(pacemaker, this, cfg_.heartbeat_interval);
}

cluster_node::~cluster_node() {
  {
    std::lock_guard<std::mutex> guard{releases_->mtx};
    releases_->net = nullptr;
    releases_->forget = nullptr;
  }
  // The pacemaker, the agent and the global scheduler call into this node: they go
  // first. The global scheduler's handle stays (the network's handlers may still read
  // it; what they send is dropped); the others' go, or their detached threads would
  // outlive the system.
  for (auto* a : {&pacemaker_, &agent_, &global_}) {
    if (!*a) continue;
    caf::scoped_actor self{local_->system()};
    self->send_exit(*a, caf::exit_reason::user_shutdown);
    self->wait_for(*a);
  }
  agent_ = nullptr;
  pacemaker_ = nullptr;
  {
    std::unique_lock<std::shared_mutex> alive{alive_mtx_};
    closing_ = true;
  }
  {
    // Work that came from other nodes and still runs here: its owners learn it failed.
    std::lock_guard<std::mutex> guard{mtx_};
    hosted_.clear();
  }
  // Tasks finishing while the node stops still report through this node: it stays whole
  // until they are done.
  local_->stop();
  local_.reset();
  net_.reset();
  std::lock_guard<std::mutex> guard{mtx_};
  for (auto& [k, p] : pending_)
    p.task->result->set_error(
        {errc::runtime_stopped,
         "node '" + self_.name + "' stopped before '" + p.task->name + "' finished"});
}

node_stats cluster_node::stats() {
  auto s = local_->stats();
  std::lock_guard<std::mutex> guard{mtx_};
  s.pulled_entries = fetched_.size();
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
    {
      std::lock_guard<std::mutex> guard{mtx_};
      for (auto& [name, p] : peers_)
        alive += p.info.alive || name == self_.name ? 1 : 0;
    }
    if (alive >= n || steady::now() >= deadline) return alive;
    std::this_thread::sleep_for(10ms);
  }
}

bool cluster_node::wait_for_stop(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> guard{stop_mtx_};
  return stop_cv_.wait_for(guard, timeout, [this] { return stop_requested_; });
}

uint64_t cluster_node::new_owner_id() {
  return ((index_ + 1) << owner_shift) | next_owner_.fetch_add(1);
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
        on_result({t->result, to_wire(error{errc::node_unreachable, ok.err().message})});
      else if (auto* c = std::get_if<wire_msg::actor_call>(&m))
        on_result({c->result, to_wire(error{errc::node_unreachable, ok.err().message})});
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
  wire_msg::join j;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    j.node = peers_[self_.name].info;
  }
  (void)net_->send(head_name(), j);
}

void cluster_node::on_peer_down(const std::string& peer, const std::string& why) {
  // The transport never connects a peer under this node's own name; no report may make
  // the node mark itself dead.
  if (peer == self_.name) return;
  std::vector<pending_call> lost;
  std::vector<std::pair<key, std::shared_ptr<pull_state>>> broken_pulls;
  std::vector<key> moved;
  std::optional<wire_msg::node_info> down;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (auto i = peers_.find(peer); i != peers_.end() && is_head() && i->second.info.alive) {
      i->second.info.alive = false;
      down = i->second.info;
    }
    for (auto i = pending_.begin(); i != pending_.end();) {
      if (i->second.node == peer) {
        lost.push_back(std::move(i->second));
        i = pending_.erase(i);
      } else {
        ++i;
      }
    }
    for (auto i = pulls_.begin(); i != pulls_.end();) {
      if (i->second->from == peer) {
        broken_pulls.emplace_back(i->first, std::move(i->second));
        i = pulls_.erase(i);
      } else {
        ++i;
      }
    }
    // Results owned here that stayed there: this node's own copy is the primary now
    // (or, while it was still being pulled, the pull fails and the task is remade).
    for (auto i = located_.begin(); i != located_.end();) {
      if (i->second.first == peer) {
        moved.push_back(i->first);
        i = located_.erase(i);
      } else {
        ++i;
      }
    }
    // Results made here for an owner on that node: nobody will read or free them.
    for (auto i = held_.begin(); i != held_.end();) {
      if (i->second.exports == 0 && owner_node(i->first) == peer)
        i = held_.erase(i);
      else
        ++i;
    }
  }
  // The node table and the global scheduler learn at once, before any retry is placed.
  if (down) {
    record_node(std::move(*down));
    update_chain();
  }
  for (auto& k : moved)
    publish(wire_msg::object_location{{k.first, k.second}, peer, 0, false});
  for (auto& [k, p] : broken_pulls) {
    auto e = lost_error(k, peer, why);
    for (auto& w : p->waiters)
      w(e);
  }
  // Actors this node created restart elsewhere; calls to them wait for that.
  for (auto& r : actors_lost(peer, why))
    post([this, r] { restart_actor(r); });
  for (auto& p : lost) {
    release_exports(p.exported);
    auto& t = p.task;
    if (p.actor && t->attempts < p.actor->spec().options.max_task_retries &&
        p.actor->hold(t, true)) {
      ++t->attempts;
      continue;
    }
    // Other actor calls fail (their actor was there); a task pinned there too.
    if (!t->method.empty() || t->options.node == peer ||
        !retry(t, "node '" + peer + "' was lost"))
      t->result->set_error({t->method.empty() ? errc::worker_died : errc::actor_died,
                            "'" + t->name + "' was running on node '" + peer +
                                "', whose connection closed: " + why +
                                (t->method.empty() ? " (after " +
                                                         std::to_string(t->attempts + 1) +
                                                         " attempt(s))"
                                                   : "")});
  }
}

bool cluster_node::retry(const detail::task_ptr& t, const std::string& why) {
  if (t->attempts >= t->options.max_retries) return false;
  ++t->attempts;
  std::fprintf(stderr, "[swarm %s] running '%s' again (attempt %u of %u): %s\n",
               self_.name.c_str(), t->name.c_str(), t->attempts + 1,
               t->options.max_retries + 1, why.c_str());
  // On the control actor: resubmitting may encode large arguments, which the I/O
  // thread that reports the loss must not wait for.
  post([this, t]() mutable { submit(t); });
  return true;
}

std::string cluster_node::owner_node(const key& k) const {
  auto index = k.first >> owner_shift;
  if (index == 0 || index > cfg_.nodes.size()) return {};
  return cfg_.nodes[index - 1].name;
}

error cluster_node::lost_error(const key& k, const std::string& holder,
                               const std::string& why) const {
  auto id = object_id{k.first, k.second}.to_string();
  auto owner = owner_node(k);
  if (owner == holder)
    return {errc::owner_died, "object " + id + "'s owner, node '" + owner +
                                  "', died with its value: " + why};
  return {errc::object_lost,
          "node '" + holder + "', which held object " + id + ", died: " + why};
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
          on_result(std::move(x), peer);
        } else if constexpr (std::is_same_v<T, wire_msg::actor_call>) {
          on_actor_call(std::move(x));
        } else if constexpr (std::is_same_v<T, wire_msg::object_pull>) {
          on_pull(peer, x);
        } else if constexpr (std::is_same_v<T, wire_msg::object_chunk>) {
          on_chunk(std::move(x));
        } else if constexpr (std::is_same_v<T, wire_msg::object_free>) {
          std::lock_guard<std::mutex> guard{mtx_};
          held_.erase(key_of(x.id));
        } else if constexpr (std::is_same_v<T, wire_msg::heartbeat>) {
          on_heartbeat(peer, x);
        } else if constexpr (std::is_same_v<T, wire_msg::join>) {
          on_join(x);
        } else if constexpr (std::is_same_v<T, wire_msg::node_table>) {
          on_table(x);
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
        } else if constexpr (std::is_same_v<T, wire_msg::actor_created>) {
          answer(x.request_id, std::move(x));
        } else if constexpr (std::is_same_v<T, wire_msg::actor_location>) {
          answer(x.request_id, std::move(x));
        } else if constexpr (std::is_same_v<T, wire_msg::actor_checkpoint>) {
          on_checkpoint(peer, std::move(x));
        } else if constexpr (std::is_same_v<T, wire_msg::gcs_chain>) {
          auto shard = x.shard;
          if (!local_->chain_message(std::move(x)))
            std::fprintf(stderr, "[swarm %s] chain message from '%s' for shard %u dropped: "
                                 "this node has %zu\n",
                         self_.name.c_str(), peer.c_str(), shard, cfg_.gcs_shards);
        } else if constexpr (std::is_same_v<T, wire_msg::kv_request>) {
          on_kv_request(peer, std::move(x));
        } else if constexpr (std::is_same_v<T, wire_msg::kv_reply>) {
          answer(x.request_id, std::move(x));
        } else if constexpr (std::is_same_v<T, wire_msg::actor_kill>) {
          detail::actor_record_ptr rec;
          {
            std::lock_guard<std::mutex> guard{mtx_};
            if (auto i = hosted_.find(x.actor_id); i != hosted_.end()) {
              rec = i->second;
              hosted_.erase(i);
            }
          }
          if (rec) local_->kill(*rec, false);
        } else {
          // hello and proof never get here: the endpoint consumes them.
        }
      },
      m);
}

// -- control: heartbeats, the node table, stop ------------------------------------------

void cluster_node::tick() {
  if (!is_head()) {
    wire_msg::heartbeat hb;
    hb.sent_ns = static_cast<uint64_t>(steady::now().time_since_epoch().count());
    hb.queued = static_cast<uint32_t>(local_inflight_.load());
    hb.load = static_cast<double>(hb.queued);
    // Joining again may block (a connect): the agent does it, one attempt at a time.
    if (!net_->connected(head_name()) && !rejoining_.exchange(true))
      post([this] {
        if (connect_to(head_name())) {
          wire_msg::join j;
          {
            std::lock_guard<std::mutex> guard{mtx_};
            j.node = peers_[self_.name].info;
          }
          (void)net_->send(head_name(), j);
        }
        rejoining_ = false;
      });
    (void)net_->send(head_name(), hb);
    return;
  }
  std::vector<std::string> alive, silent;
  std::vector<wire_msg::node_info> changed;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    auto& me = peers_[self_.name];
    me.info.queued = static_cast<uint32_t>(local_inflight_.load());
    me.last_seen = steady::now();
    changed.push_back(me.info);
    for (auto& [name, p] : peers_) {
      if (name != self_.name && p.info.alive && silent_for_timeout(name, p)) {
        p.info.alive = false;
        changed.push_back(p.info);
        silent.push_back(name);
      }
      if (p.info.alive && name != self_.name) alive.push_back(name);
    }
  }
  for (auto& info : changed)
    record_node(std::move(info));
  // A frozen node (stopped, or its network cut) keeps its connection open: closing it
  // fails over what was in flight there, as a crash would.
  for (auto& n : silent)
    net_->disconnect(n, "no heartbeat for " + std::to_string(cfg_.node_timeout.count()) +
                            " ms");
  update_chain(); // also brings back a node that answers again
  auto table = table_snapshot();
  for (auto& n : alive)
    (void)net_->send(n, table);
}

bool cluster_node::silent_for_timeout(const std::string& name, const peer_entry& p) const {
  if (steady::now() - p.last_seen <= cfg_.node_timeout) return false;
  // A heartbeat may wait behind bulk frames on either side, or behind this node's own
  // reading: any bytes from the peer, read or waiting to be, show it is alive.
  auto quiet = net_->quiet_for(name);
  return !quiet || *quiet > cfg_.node_timeout;
}

void cluster_node::on_join(const wire_msg::join& m) {
  if (!is_head()) return;
  std::vector<std::string> alive;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    auto& p = peers_[m.node.name];
    p.info = m.node;
    p.info.alive = true;
    p.info.head = false;
    p.last_seen = steady::now();
    for (auto& [name, e] : peers_)
      if (e.info.alive && name != self_.name) alive.push_back(name);
  }
  record_node(m.node);
  update_chain();
  auto table = table_snapshot();
  for (auto& n : alive)
    send_to(n, table);
}

void cluster_node::on_heartbeat(const std::string& peer, const wire_msg::heartbeat& m) {
  wire_msg::node_info info;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    auto i = peers_.find(peer);
    if (i == peers_.end()) return; // not joined: ignored until it joins
    i->second.last_seen = steady::now();
    i->second.info.alive = true;
    i->second.info.queued = m.queued;
    info = i->second.info;
  }
  record_node(std::move(info));
}

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
  wire_msg::node_table t;
  std::lock_guard<std::mutex> guard{mtx_};
  auto now = steady::now();
  for (auto& [name, p] : peers_) {
    auto info = p.info;
    info.last_seen_ms = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(now - p.last_seen).count());
    t.nodes.push_back(std::move(info));
  }
  return t;
}

void cluster_node::on_table(const wire_msg::node_table& t) {
  if (is_head()) return;
  std::vector<std::string> to_dial, dead;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    for (auto& n : t.nodes) {
      if (n.name == self_.name) continue;
      auto& p = peers_[n.name];
      p.info = n;
      if (n.alive && n.name > self_.name) to_dial.push_back(n.name);
      if (!n.alive) dead.push_back(n.name);
    }
  }
  // The head's verdict stands for everyone: work and pulls in flight there fail over.
  for (auto& n : dead)
    if (net_->connected(n)) net_->disconnect(n, "the head found node '" + n + "' dead");
  // Peers dial each other once (the smaller name dials), so calls between workers do
  // not wait for a connection.
  for (auto& n : to_dial)
    if (!net_->connected(n)) post([this, n] { (void)connect_to(n); });
}

void cluster_node::on_stop(const wire_msg::stop_request& m) {
  if (is_head() && (m.node.empty() || m.node != self_.name)) {
    std::vector<std::string> targets;
    {
      std::lock_guard<std::mutex> guard{mtx_};
      for (auto& [name, p] : peers_)
        if (name != self_.name && p.info.alive && (m.node.empty() || name == m.node))
          targets.push_back(name);
    }
    for (auto& n : targets)
      send_to(n, wire_msg::stop_request{n});
    if (!m.node.empty()) return;
  }
  std::lock_guard<std::mutex> guard{stop_mtx_};
  stop_requested_ = true;
  stop_cv_.notify_all();
}

} // namespace swarm::actors
