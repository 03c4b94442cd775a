#include "actors/cluster_node.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <future>
#include <thread>

#include "actors/messages.hpp"

namespace swarm::detail {

std::unique_ptr<core> start_cluster_node(const application& app,
                                         const cluster_config& cfg,
                                         const std::string& node) {
  return std::make_unique<actors::cluster_node>(app, cfg, node);
}

} // namespace swarm::detail

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::function<void()>)

namespace swarm::actors {

namespace {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

constexpr auto request_timeout = 10s;
constexpr uint64_t chunk_bytes = 4 << 20;
constexpr size_t pull_window = 4;
constexpr int owner_shift = 40;

using tick_atom = caf::atom_constant<caf::atom("tick")>;
using run_fn_atom = caf::atom_constant<caf::atom("runfn")>;

wire_msg::resource_list to_list(const resource_set& r) {
  return {r.amounts().begin(), r.amounts().end()};
}

result<resource_set> from_list(const wire_msg::resource_list& l) {
  resource_set out;
  try {
    for (auto& [name, amount] : l)
      out.set(name, amount);
  } catch (const failure& f) {
    return f.err();
  }
  return out;
}

wire_msg::object_ref_id to_wire(const object_id& id) {
  return {id.owner, id.seq};
}

object_id from_wire(const wire_msg::object_ref_id& id) {
  return {id.owner, id.seq};
}

std::pair<uint64_t, uint64_t> key_of(const object_id& id) {
  return {id.owner, id.seq};
}

std::pair<uint64_t, uint64_t> key_of(const wire_msg::object_ref_id& id) {
  return {id.owner, id.seq};
}

std::vector<uint8_t> encode(const detail::boxed_value& v) {
  std::vector<uint8_t> out;
  out.reserve(v.type->byte_size(v.ptr.get()));
  v.type->encode(v.ptr.get(), out);
  return out;
}

result<detail::boxed_value> decode(const wire_msg::value& v,
                                   const detail::type_descriptor* want) {
  if (v.type_name != want->name)
    return error{errc::type_mismatch,
                 "expected a " + want->name + ", the other node sent a " + v.type_name};
  std::string why;
  auto p = want->decode(v.bytes.data(), v.bytes.size(), why);
  if (!p) return error{errc::type_mismatch, "malformed " + want->name + ": " + why};
  return detail::boxed_value{std::move(p), want};
}

wire_msg::error_value to_wire(const error& e) {
  return {static_cast<uint16_t>(e.code), e.message};
}

error from_wire(const wire_msg::error_value& e) {
  auto code = e.code <= static_cast<uint16_t>(errc::node_unreachable)
                  ? static_cast<errc>(e.code)
                  : errc::application_error;
  return {code, e.message};
}

/// An actor on another node, as this node's handles see it.
class remote_actor_record final : public detail::actor_record {
public:
  remote_actor_record(detail::actor_spec spec, std::string node, uint64_t id)
      : actor_record(std::move(spec)), node_(std::move(node)), id_(id) {}

  const std::string& remote_node() const override { return node_; }
  uint64_t id() const noexcept { return id_; }

private:
  std::string node_;
  uint64_t id_;
};

/// Runs posted functions and the periodic tick, off the I/O thread (they may block).
caf::behavior agent(caf::event_based_actor* self, cluster_node* node,
                    std::chrono::milliseconds interval) {
  self->delayed_send(self, interval, tick_atom::value);
  return {
      [](run_fn_atom, const std::function<void()>& f) { f(); },
      [=](tick_atom) {
        node->tick();
        self->delayed_send(self, interval, tick_atom::value);
      },
  };
}

} // namespace

// -- bookkeeping types ------------------------------------------------------------------

struct cluster_node::pending_call {
  detail::task_ptr task;
  std::string node;
  std::vector<key> exported;
};

struct cluster_node::held_object {
  detail::boxed_value value;
  std::shared_ptr<const std::vector<uint8_t>> encoded;
  size_t exports = 0; // tasks on other nodes that may still pull it; 0: owned result
};

struct cluster_node::pull_state {
  std::string from;
  const detail::type_descriptor* type = nullptr;
  std::vector<uint8_t> buf;
  uint64_t total = 0;
  uint64_t received = 0;
  uint64_t next_offset = 0;
  size_t in_flight = 0;
  std::vector<value_cb> waiters;
};

struct cluster_node::peer_entry {
  wire_msg::node_info info;
  steady::time_point last_seen = steady::now();
};

/// Where leases of results held on other nodes send their `object_free`; cut at
/// shutdown so late releases do nothing.
struct cluster_node::release_sink {
  std::mutex mtx;
  wire_msg::endpoint* net = nullptr;
  std::function<void(const object_id&)> forget;
};

namespace {

/// Keeps a result that stayed on another node there while the owner's slot lives.
class remote_hold final : public detail::store_lease {
public:
  remote_hold(std::shared_ptr<void> sink, std::function<void()> release)
      : sink_(std::move(sink)), release_(std::move(release)) {}
  ~remote_hold() override { release_(); }

private:
  std::shared_ptr<void> sink_;
  std::function<void()> release_;
};

} // namespace

// -- life cycle -------------------------------------------------------------------------

cluster_node::cluster_node(const application& app, cluster_config cfg,
                           const std::string& node)
    : cfg_(std::move(cfg)) {
  auto spec = cfg_.find(node);
  if (!spec) throw failure{spec.err()};
  self_ = **spec;
  index_ = static_cast<uint64_t>(*spec - cfg_.nodes.data());
  local_ = std::make_unique<local_node>(app, cfg_.runtime_for(self_), this);
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
  auto ep = wire_msg::endpoint::start(ec, std::move(h));
  if (!ep)
    throw failure{{ep.err().code, "node '" + self_.name + "': " + ep.err().message}};
  net_ = std::move(*ep);
  {
    std::lock_guard<std::mutex> guard{releases_->mtx};
    releases_->net = net_.get();
    releases_->forget = [this](const object_id& id) {
      std::lock_guard<std::mutex> g{mtx_};
      located_.erase(key_of(id));
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
  if (!is_head()) join_head();
  agent_ = local_->system().spawn<caf::detached>(agent, this, cfg_.heartbeat_interval);
}

cluster_node::~cluster_node() {
  {
    std::lock_guard<std::mutex> guard{releases_->mtx};
    releases_->net = nullptr;
    releases_->forget = nullptr;
  }
  if (agent_) {
    // The agent uses the local node: it must be gone before the node goes.
    caf::scoped_actor self{local_->system()};
    self->send_exit(agent_, caf::exit_reason::user_shutdown);
    self->wait_for(agent_);
    agent_ = nullptr;
  }
  {
    std::unique_lock<std::shared_mutex> alive{alive_mtx_};
    closing_ = true;
  }
  {
    // Work that came from other nodes and still runs here: its owners learn it failed.
    std::lock_guard<std::mutex> guard{mtx_};
    hosted_.clear();
  }
  local_.reset();
  net_.reset();
  std::lock_guard<std::mutex> guard{mtx_};
  for (auto& [k, p] : pending_)
    p.task->result->set_error(
        {errc::runtime_stopped,
         "node '" + self_.name + "' stopped before '" + p.task->name + "' finished"});
}

void cluster_node::post(std::function<void()> f) {
  // Before the agent runs (while joining) there is nothing to post to; what is posted
  // then (dialing peers of a node table) is redone on the next table.
  if (agent_) caf::anon_send(agent_, run_fn_atom::value, std::move(f));
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
  auto peer = net_->connect((*spec)->address, (*spec)->port, 5s);
  if (!peer) return peer.err();
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
  if (net_->connected(node) && net_->send(node, m)) return;
  post([this, node, m = std::move(m)]() mutable {
    if (auto ok = connect_to(node); !ok) {
      std::fprintf(stderr, "[swarm %s] cannot reach node '%s': %s\n", self_.name.c_str(),
                   node.c_str(), ok.err().message.c_str());
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
  std::vector<detail::task_ptr> lost;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (auto i = peers_.find(peer); i != peers_.end() && is_head())
      i->second.info.alive = false;
    for (auto i = pending_.begin(); i != pending_.end();) {
      if (i->second.node == peer) {
        lost.push_back(std::move(i->second.task));
        i = pending_.erase(i);
      } else {
        ++i;
      }
    }
  }
  for (auto& t : lost)
    t->result->set_error({t->method.empty() ? errc::worker_died : errc::actor_died,
                          "'" + t->name + "' was running on node '" + peer +
                              "', whose connection closed: " + why});
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
          on_result(std::move(x));
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
          send_to(peer, table_snapshot());
        } else if constexpr (std::is_same_v<T, wire_msg::stop_request>) {
          on_stop(x);
        } else if constexpr (std::is_same_v<T, wire_msg::actor_create>) {
          post([this, peer, x]() { create_actor_here(peer, x); });
        } else if constexpr (std::is_same_v<T, wire_msg::actor_register>) {
          post([this, peer, x]() { register_remote_name(peer, x); });
        } else if constexpr (std::is_same_v<T, wire_msg::actor_lookup>) {
          post([this, peer, x]() { lookup_name(peer, x); });
        } else if constexpr (std::is_same_v<T, wire_msg::actor_created>) {
          answer(x.request_id, std::move(x));
        } else if constexpr (std::is_same_v<T, wire_msg::actor_location>) {
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
  auto s = local_->stats();
  if (!is_head()) {
    wire_msg::heartbeat hb;
    hb.sent_ns = static_cast<uint64_t>(steady::now().time_since_epoch().count());
    hb.queued = static_cast<uint32_t>(local_inflight_.load());
    hb.load = static_cast<double>(s.queued_tasks + s.dispatched_tasks);
    if (!net_->connected(head_name())) {
      if (connect_to(head_name())) {
        wire_msg::join j;
        {
          std::lock_guard<std::mutex> guard{mtx_};
          j.node = peers_[self_.name].info;
        }
        (void)net_->send(head_name(), j);
      }
    }
    (void)net_->send(head_name(), hb);
    return;
  }
  std::vector<std::string> alive;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    auto& me = peers_[self_.name];
    me.info.queued = static_cast<uint32_t>(local_inflight_.load());
    me.last_seen = steady::now();
    for (auto& [name, p] : peers_) {
      if (name != self_.name && steady::now() - p.last_seen > cfg_.node_timeout)
        p.info.alive = false;
      if (p.info.alive && name != self_.name) alive.push_back(name);
    }
  }
  auto table = table_snapshot();
  for (auto& n : alive)
    (void)net_->send(n, table);
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
  auto table = table_snapshot();
  for (auto& n : alive)
    send_to(n, table);
}

void cluster_node::on_heartbeat(const std::string& peer, const wire_msg::heartbeat& m) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = peers_.find(peer);
  if (i == peers_.end()) return; // not joined: ignored until it joins
  i->second.last_seen = steady::now();
  i->second.info.alive = true;
  i->second.info.queued = m.queued;
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
  std::vector<std::string> to_dial;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    for (auto& n : t.nodes) {
      if (n.name == self_.name) continue;
      auto& p = peers_[n.name];
      p.info = n;
      if (n.alive && n.name > self_.name) to_dial.push_back(n.name);
    }
  }
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

// -- scheduling -------------------------------------------------------------------------

result<void> cluster_node::feasible(const resource_set& demand, const std::string& node) {
  std::lock_guard<std::mutex> guard{mtx_};
  std::string seen;
  for (auto& [name, p] : peers_) {
    if (!node.empty() && name != node) continue;
    auto total = from_list(p.info.total);
    if (p.info.alive && total && demand.fits_in(*total)) return {};
    seen += (seen.empty() ? "" : ", ") + name + " " + (total ? total->to_string() : "?");
  }
  if (!node.empty() && seen.empty()) {
    if (!cfg_.find(node)) return error{errc::infeasible, cfg_.find(node).err().message};
    return error{errc::infeasible, "node '" + node + "' has not joined the cluster"};
  }
  return error{errc::infeasible, "demands " + demand.to_string() +
                                     " but no node of the cluster has it (" + seen + ")"};
}

void cluster_node::submit(detail::task_ptr task) {
  const auto& opts = task->options;
  if (!opts.node.empty() && opts.node != self_.name)
    return send_task(std::move(task), opts.node, true);
  if (opts.node.empty()) {
    bool fits_here = opts.resources.fits_in(local_->total_resources());
    // Large inputs held elsewhere pull the task towards them.
    bool inputs_elsewhere = false;
    {
      std::lock_guard<std::mutex> guard{mtx_};
      for (auto& a : task->args)
        if (a.ref)
          if (auto i = located_.find(key_of(a.ref->id())); i != located_.end())
            inputs_elsewhere |= i->second.first != self_.name;
    }
    // Bottom-up: a busy node spills what it cannot start soon, when another node can.
    bool busy = local_inflight_.load(std::memory_order_relaxed) >= spill_threshold_ &&
                idle_elsewhere();
    if (!fits_here || inputs_elsewhere || busy)
      return send_task(std::move(task), is_head() ? std::string{} : head_name(), false);
  }
  run_locally(std::move(task));
}

void cluster_node::run_locally(detail::task_ptr task) {
  local_inflight_.fetch_add(1, std::memory_order_relaxed);
  task->result->when_done(
      [this] { local_inflight_.fetch_sub(1, std::memory_order_relaxed); });
  local_->submit(std::move(task));
}

bool cluster_node::idle_elsewhere() const {
  std::lock_guard<std::mutex> guard{mtx_};
  for (auto& [name, p] : peers_) {
    if (name == self_.name || !p.info.alive) continue;
    double cpus = 0;
    for (auto& [r, amount] : p.info.total)
      if (r == "CPU") cpus = amount;
    if (static_cast<double>(p.info.queued) < cpus) return true;
  }
  return false;
}

void cluster_node::send_task(detail::task_ptr task, const std::string& to, bool placed) {
  wire_msg::task_submit m;
  m.function = task->name;
  m.result = to_wire(task->result->id());
  m.resources = to_list(task->options.resources);
  m.max_retries = task->options.max_retries;
  m.retry_exceptions = task->options.retry_exceptions;
  m.priority = task->options.priority;
  m.owner_node = self_.name;
  m.placed = placed;
  std::vector<key> exported;
  for (auto& a : task->args)
    m.args.push_back(export_arg(a, exported));
  auto target = to;
  if (target.empty()) {
    // This is the head: place it now.
    auto demand = task->options.resources;
    auto where = place(demand, m.args);
    if (!where) {
      release_exports(exported);
      task->result->set_error(where.err());
      return;
    }
    if (*where == self_.name) {
      release_exports(exported);
      return run_locally(std::move(task));
    }
    target = *where;
    m.placed = true;
  }
  {
    std::lock_guard<std::mutex> guard{mtx_};
    pending_[key_of(task->result->id())] = {task, target, std::move(exported)};
  }
  send_to(target, std::move(m));
}

result<std::string> cluster_node::place(const resource_set& demand,
                                        const std::vector<wire_msg::arg>& args) {
  std::lock_guard<std::mutex> guard{mtx_};
  peer_entry* best = nullptr;
  uint64_t best_local = 0;
  for (auto& [name, p] : peers_) {
    auto total = from_list(p.info.total);
    if (!p.info.alive || !total || !demand.fits_in(*total)) continue;
    uint64_t local_bytes = 0;
    for (auto& a : args)
      if (auto* r = std::get_if<wire_msg::remote_ref>(&a); r && r->node == name)
        local_bytes += r->size;
    bool better = !best || local_bytes > best_local ||
                  (local_bytes == best_local && p.info.queued < best->info.queued);
    if (better) {
      best = &p;
      best_local = local_bytes;
    }
  }
  if (!best)
    return error{errc::infeasible, "demands " + demand.to_string() +
                                       " but no live node of the cluster has it"};
  // Until its next heartbeat, the node counts what was just placed there.
  ++best->info.queued;
  return best->info.name;
}

void cluster_node::place_and_forward(wire_msg::task_submit m) {
  auto demand = from_list(m.resources);
  if (!demand)
    return send_to(m.owner_node, wire_msg::task_result{m.result, to_wire(demand.err())});
  auto where = place(*demand, m.args);
  if (!where)
    return send_to(m.owner_node, wire_msg::task_result{m.result, to_wire(where.err())});
  m.placed = true;
  if (*where == self_.name) return run_task_here(std::move(m));
  send_to(*where, std::move(m));
}

void cluster_node::run_task_here(wire_msg::task_submit m) {
  auto fail = [this, &m](error e) {
    send_to(m.owner_node, wire_msg::task_result{m.result, to_wire(e)});
  };
  auto entry = local_->app().find_entry(m.function);
  if (!entry) return fail(entry.err());
  auto demand = from_list(m.resources);
  if (!demand) return fail(demand.err());
  if (m.args.size() != (*entry)->params.size())
    return fail({errc::type_mismatch, "task '" + m.function + "' takes " +
                                          std::to_string((*entry)->params.size()) +
                                          " argument(s), the owner sent " +
                                          std::to_string(m.args.size())});
  auto* f = *entry;
  auto owner = m.owner_node;
  auto id = from_wire(m.result);
  task_options opts;
  opts.resources = *demand;
  opts.max_retries = m.max_retries;
  opts.retry_exceptions = m.retry_exceptions;
  opts.priority = m.priority;
  gather_args(m.args, f->params,
              [this, f, owner, id, opts](result<std::vector<detail::boxed_value>> args) {
                auto t = incoming(f->name, &f->fn, f->params, f->result, id, owner, args);
                if (!t) return;
                t->options = opts;
                t->result->set_producer(t);
                local_->submit(std::move(t));
              });
}

detail::task_ptr
cluster_node::incoming(std::string name, const detail::invoker* fn,
                       const std::vector<const detail::type_descriptor*>& params,
                       const detail::type_descriptor* result_type, const object_id& id,
                       const std::string& reply_to,
                       result<std::vector<detail::boxed_value>>& args) {
  auto t = std::make_shared<detail::task_spec>();
  t->name = std::move(name);
  t->fn = fn;
  t->params = params;
  t->result_type = result_type;
  t->owner = id.owner;
  t->result = std::make_shared<detail::object_slot>(id);
  reply_when_done(t->result, reply_to);
  if (!args) {
    t->result->set_error(args.err());
    return nullptr;
  }
  for (auto& v : *args)
    t->args.push_back({std::move(v), nullptr});
  return t;
}

void cluster_node::reply_when_done(const detail::slot_ptr& slot, const std::string& to) {
  std::weak_ptr<detail::object_slot> weak = slot;
  slot->when_done([this, weak, to] {
    auto s = weak.lock();
    if (!s) return;
    wire_msg::task_result r;
    r.result = to_wire(s->id());
    auto v = s->read();
    if (!v) {
      r.outcome = to_wire(v.err());
    } else {
      auto bytes = std::make_shared<std::vector<uint8_t>>(encode(*v));
      if (bytes->size() > cfg_.inline_threshold) {
        auto size = bytes->size();
        {
          std::lock_guard<std::mutex> guard{mtx_};
          held_[key_of(s->id())] = {*v, std::move(bytes), 0};
        }
        r.outcome = wire_msg::stored_at{self_.name, size};
      } else {
        r.outcome = wire_msg::value{v->type->name, std::move(*bytes)};
      }
    }
    send_to(to, std::move(r));
  });
}

void cluster_node::on_result(wire_msg::task_result&& m) {
  pending_call p;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    auto i = pending_.find(key_of(m.result));
    if (i == pending_.end()) return; // cancelled, or its owner gave up
    p = std::move(i->second);
    pending_.erase(i);
  }
  release_exports(p.exported);
  auto& slot = p.task->result;
  if (auto* e = std::get_if<wire_msg::error_value>(&m.outcome)) {
    slot->set_error(from_wire(*e));
  } else if (auto* v = std::get_if<wire_msg::value>(&m.outcome)) {
    auto d = decode(*v, p.task->result_type);
    if (d)
      slot->set_value(std::move(*d));
    else
      slot->set_error(d.err());
  } else {
    // Stays where it was made; this copy is pulled now, the holder keeps the primary
    // (so later tasks reading it run there) until this slot goes.
    auto where = std::get<wire_msg::stored_at>(m.outcome);
    wire_msg::remote_ref ref{m.result, where.node, where.size};
    auto sink = releases_;
    auto id = slot->id();
    {
      std::lock_guard<std::mutex> guard{mtx_};
      located_[key_of(id)] = {where.node, where.size};
    }
    auto release = [sink, id, node = where.node] {
      std::lock_guard<std::mutex> guard{sink->mtx};
      if (!sink->net) return;
      (void)sink->net->send(node, wire_msg::object_free{to_wire(id)});
      sink->forget(id);
    };
    // The callback keeps the task: dropping it unfinished would fail the slot.
    fetch(ref, p.task->result_type,
          [task = p.task, slot, sink, release](result<detail::boxed_value> got) {
            if (!got) {
              slot->set_error(got.err());
              release();
              return;
            }
            slot->set_value(std::move(*got),
                            std::make_unique<remote_hold>(sink, release));
          });
  }
}

// -- objects ----------------------------------------------------------------------------

wire_msg::arg cluster_node::export_arg(const detail::task_arg& a,
                                       std::vector<key>& exported) {
  detail::boxed_value v = a.value;
  object_id id{new_owner_id(), 0};
  if (a.ref) {
    std::lock_guard<std::mutex> guard{mtx_};
    if (auto i = located_.find(key_of(a.ref->id())); i != located_.end())
      return wire_msg::remote_ref{to_wire(a.ref->id()), i->second.first,
                                  i->second.second};
  }
  if (a.ref) {
    auto r = a.ref->read();
    if (r) v = *r;
    id = a.ref->id();
  }
  auto bytes = std::make_shared<std::vector<uint8_t>>(encode(v));
  if (bytes->size() <= cfg_.inline_threshold)
    return wire_msg::value{v.type->name, std::move(*bytes)};
  auto k = key_of(id);
  auto size = bytes->size();
  {
    std::lock_guard<std::mutex> guard{mtx_};
    auto& h = held_[k];
    if (!h.encoded) h = {v, std::move(bytes), 0};
    ++h.exports;
  }
  exported.push_back(k);
  return wire_msg::remote_ref{to_wire(id), self_.name, size};
}

void cluster_node::release_exports(const std::vector<key>& exported) {
  std::lock_guard<std::mutex> guard{mtx_};
  for (auto& k : exported) {
    auto i = held_.find(k);
    if (i != held_.end() && i->second.exports > 0 && --i->second.exports == 0)
      held_.erase(i);
  }
}

void cluster_node::gather_args(const std::vector<wire_msg::arg>& args,
                               const std::vector<const detail::type_descriptor*>& params,
                               values_cb done) {
  struct gather {
    std::mutex mtx;
    std::vector<detail::boxed_value> values;
    size_t missing = 0;
    std::optional<error> failed;
    values_cb done;
  };
  auto g = std::make_shared<gather>();
  g->values.resize(args.size());
  g->done = std::move(done);
  std::vector<size_t> refs;
  for (size_t i = 0; i < args.size(); ++i) {
    if (auto* v = std::get_if<wire_msg::value>(&args[i])) {
      auto d = decode(*v, params[i]);
      if (!d) {
        auto e = d.err();
        e.message = "argument " + std::to_string(i + 1) + ": " + e.message;
        return g->done(e);
      }
      g->values[i] = std::move(*d);
    } else {
      refs.push_back(i);
    }
  }
  if (refs.empty()) return g->done(std::move(g->values));
  g->missing = refs.size();
  for (auto i : refs)
    fetch(std::get<wire_msg::remote_ref>(args[i]), params[i],
          [g, i](result<detail::boxed_value> v) {
            std::unique_lock<std::mutex> guard{g->mtx};
            if (v)
              g->values[i] = std::move(*v);
            else if (!g->failed)
              g->failed = v.err();
            if (--g->missing > 0) return;
            guard.unlock();
            if (g->failed)
              g->done(*g->failed);
            else
              g->done(std::move(g->values));
          });
}

void cluster_node::fetch(const wire_msg::remote_ref& ref,
                         const detail::type_descriptor* type, value_cb done) {
  auto k = key_of(ref.id);
  std::unique_lock<std::mutex> guard{mtx_};
  if (auto h = held_.find(k); h != held_.end()) {
    auto v = h->second.value;
    guard.unlock();
    if (!detail::same_type(*v.type, *type))
      return done(error{errc::type_mismatch,
                        "expected a " + type->name + ", got a " + v.type->name});
    return done(v);
  }
  if (auto c = fetched_.find(k); c != fetched_.end()) {
    if (auto p = c->second.first.lock(); p && c->second.second == type) {
      guard.unlock();
      return done(detail::boxed_value{std::move(p), type});
    }
  }
  auto& p = pulls_[k];
  if (p) {
    p->waiters.push_back(std::move(done));
    return;
  }
  p = std::make_shared<pull_state>();
  p->from = ref.node;
  p->type = type;
  p->total = ref.size;
  p->buf.resize(ref.size);
  p->waiters.push_back(std::move(done));
  request_chunks(k, *p);
}

void cluster_node::request_chunks(const key& k, pull_state& p) {
  // Flow control: at most `pull_window` chunks requested and not yet received.
  while (p.in_flight < pull_window && p.next_offset < p.total) {
    auto len = std::min(chunk_bytes, p.total - p.next_offset);
    send_to(p.from, wire_msg::object_pull{{k.first, k.second}, p.next_offset, len});
    p.next_offset += len;
    ++p.in_flight;
  }
}

void cluster_node::on_pull(const std::string& peer, const wire_msg::object_pull& m) {
  std::shared_ptr<const std::vector<uint8_t>> bytes;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    auto i = held_.find(key_of(m.id));
    if (i != held_.end()) bytes = i->second.encoded;
  }
  wire_msg::object_chunk c;
  c.id = m.id;
  c.offset = m.offset;
  if (!bytes) {
    c.missing = "node '" + self_.name + "' holds no object " +
                object_id{m.id.owner, m.id.seq}.to_string() + " (freed, or never here)";
  } else if (m.offset > bytes->size()) {
    c.missing = "offset " + std::to_string(m.offset) + " is past the object's end";
  } else {
    c.total = bytes->size();
    c.source_length = std::min<uint64_t>(m.length, bytes->size() - m.offset);
    c.source = std::move(bytes);
  }
  send_to(peer, std::move(c));
}

void cluster_node::on_chunk(wire_msg::object_chunk&& m) {
  auto k = key_of(m.id);
  std::shared_ptr<pull_state> p;
  std::vector<value_cb> waiters;
  result<detail::boxed_value> out{error{errc::object_freed, ""}};
  {
    std::lock_guard<std::mutex> guard{mtx_};
    auto i = pulls_.find(k);
    if (i == pulls_.end()) return;
    p = i->second;
    bool bad =
        !m.missing.empty() || m.total != p->total || m.offset + m.data.size() > p->total;
    if (!bad) {
      std::memcpy(p->buf.data() + m.offset, m.data.data(), m.data.size());
      p->received += m.data.size();
      --p->in_flight;
      if (p->received < p->total) {
        request_chunks(k, *p);
        return;
      }
      std::string why;
      auto v = p->type->decode(p->buf.data(), p->buf.size(), why);
      if (v) {
        out = detail::boxed_value{v, p->type};
        fetched_[k] = {v, p->type};
      } else {
        out = error{errc::type_mismatch, "malformed " + p->type->name + ": " + why};
      }
    } else {
      out = error{errc::object_freed,
                  "pulling " + object_id{k.first, k.second}.to_string() + " from node '" +
                      p->from + "' failed: " +
                      (m.missing.empty() ? "chunk does not fit the object" : m.missing)};
    }
    waiters = std::move(p->waiters);
    pulls_.erase(i);
  }
  for (auto& w : waiters)
    w(out);
}

// -- actors -----------------------------------------------------------------------------

result<wire_msg::message> cluster_node::request(const std::string& node, uint64_t id,
                                                wire_msg::message m) {
  auto answer_promise = std::make_shared<std::promise<wire_msg::message>>();
  auto fut = answer_promise->get_future();
  {
    std::lock_guard<std::mutex> guard{mtx_};
    requests_[id] = [answer_promise](wire_msg::message a) {
      answer_promise->set_value(std::move(a));
    };
  }
  if (node != self_.name) {
    if (auto ok = connect_to(node); !ok) {
      std::lock_guard<std::mutex> guard{mtx_};
      requests_.erase(id);
      return ok.err();
    }
  }
  send_to(node, std::move(m));
  if (fut.wait_for(request_timeout) != std::future_status::ready) {
    std::lock_guard<std::mutex> guard{mtx_};
    requests_.erase(id);
    return error{errc::node_unreachable, "node '" + node + "' did not answer within " +
                                             std::to_string(request_timeout.count()) +
                                             " s"};
  }
  return fut.get();
}

void cluster_node::answer(uint64_t id, wire_msg::message m) {
  std::function<void(wire_msg::message)> f;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    auto i = requests_.find(id);
    if (i == requests_.end()) return;
    f = std::move(i->second);
    requests_.erase(i);
  }
  f(std::move(m));
}

result<detail::actor_record_ptr> cluster_node::spawn(detail::actor_spec spec) {
  auto target = spec.options.node;
  if (target.empty() && !spec.options.resources.fits_in(local_->total_resources())) {
    auto where = place(spec.options.resources, {});
    if (!where) return where.err();
    target = *where;
  }
  if (target.empty() || target == self_.name) {
    if (spec.options.name.empty()) return local_->spawn(std::move(spec));
    // Names are cluster-wide: the head's control store holds them.
    auto name = spec.options.name;
    spec.options.name.clear();
    auto rec = local_->spawn(std::move(spec));
    if (!rec) return rec;
    uint64_t id;
    {
      std::lock_guard<std::mutex> guard{mtx_};
      id = next_actor_++;
      hosted_[id] = *rec;
    }
    wire_msg::actor_register reg{0, name, id, self_.name, (*rec)->spec().type_name};
    if (is_head()) {
      auto ok = local_->register_name(name, *rec);
      if (!ok || !*ok) {
        local_->kill(**rec, false);
        return error{errc::invalid_argument,
                     ok ? "actor name '" + name + "' is already taken"
                        : ok.err().message};
      }
      return rec;
    }
    {
      std::lock_guard<std::mutex> guard{mtx_};
      reg.request_id = next_request_++;
    }
    auto a = request(head_name(), reg.request_id, reg);
    auto* loc = a ? std::get_if<wire_msg::actor_location>(&*a) : nullptr;
    if (!loc || !loc->error.empty()) {
      local_->kill(**rec, false);
      return error{errc::invalid_argument, loc ? loc->error : a.err().message};
    }
    return rec;
  }
  auto* info = local_->app().actor_info(spec.type_name);
  if (!info) return error{errc::unregistered, "actor type '" + spec.type_name + "'"};
  wire_msg::actor_create m;
  m.type_name = spec.type_name;
  for (auto& v : spec.constructor_args)
    m.args.push_back(wire_msg::value{v.type->name, encode(v)});
  m.name = spec.options.name;
  m.resources = to_list(spec.options.resources);
  m.max_restarts = static_cast<int32_t>(spec.options.max_restarts);
  m.owner_node = self_.name;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    m.request_id = next_request_++;
  }
  auto a = request(target, m.request_id, m);
  if (!a) return a.err();
  auto* created = std::get_if<wire_msg::actor_created>(&*a);
  if (!created) return error{errc::invalid_argument, "unexpected answer to actor_create"};
  if (!created->ok) return from_wire(created->error);
  return detail::actor_record_ptr{
      std::make_shared<remote_actor_record>(std::move(spec), target, created->actor_id)};
}

void cluster_node::create_actor_here(const std::string& peer, wire_msg::actor_create m) {
  wire_msg::actor_created out;
  out.request_id = m.request_id;
  out.node = self_.name;
  auto fail = [&](error e) {
    out.error = to_wire(e);
    send_to(peer, out);
  };
  auto* info = local_->app().actor_info(m.type_name);
  if (!info)
    return fail({errc::unregistered, "node '" + self_.name + "' has no actor type '" +
                                         m.type_name + "' registered"});
  const detail::constructor_entry* ctor = nullptr;
  for (auto& c : info->constructors) {
    bool same = c.params.size() == m.args.size();
    for (size_t i = 0; same && i < m.args.size(); ++i)
      same = c.params[i]->name == m.args[i].type_name;
    if (same) ctor = &c;
  }
  if (!ctor) {
    std::string sig;
    for (auto& a : m.args)
      sig += (sig.empty() ? "" : ", ") + a.type_name;
    return fail({errc::type_mismatch,
                 "actor type '" + m.type_name + "' has no constructor(" + sig +
                     ") registered for creation from other nodes: register it with "
                     ".constructor<...>()"});
  }
  std::vector<detail::boxed_value> args;
  for (size_t i = 0; i < m.args.size(); ++i) {
    auto d = decode(m.args[i], ctor->params[i]);
    if (!d) return fail(d.err());
    args.push_back(std::move(*d));
  }
  detail::actor_spec spec;
  spec.type_name = m.type_name;
  spec.factory = [make = ctor->make, args] { return make(args); };
  spec.options.max_restarts = static_cast<uint32_t>(std::max(0, m.max_restarts));
  spec.options.name = m.name;
  if (auto r = from_list(m.resources)) spec.options.resources = *r;
  spec.options.node = self_.name;
  auto rec = spawn(std::move(spec));
  if (!rec) return fail(rec.err());
  {
    std::lock_guard<std::mutex> guard{mtx_};
    out.actor_id = next_actor_++;
    hosted_[out.actor_id] = *rec;
  }
  out.ok = true;
  send_to(peer, out);
}

void cluster_node::register_remote_name(const std::string& peer,
                                        const wire_msg::actor_register& m) {
  wire_msg::actor_location out{m.request_id, false, m.actor_id, m.node, m.type_name, {}};
  detail::actor_spec spec;
  spec.type_name = m.type_name;
  spec.options.name = m.name;
  auto rec = std::make_shared<remote_actor_record>(std::move(spec), m.node, m.actor_id);
  auto ok = local_->register_name(m.name, rec);
  if (!ok)
    out.error = ok.err().message;
  else if (!*ok)
    out.error = "actor name '" + m.name + "' is already taken";
  else
    out.found = true;
  send_to(peer, out);
}

void cluster_node::lookup_name(const std::string& peer, const wire_msg::actor_lookup& m) {
  wire_msg::actor_location out;
  out.request_id = m.request_id;
  auto rec = local_->find_actor(m.name);
  if (!rec) {
    out.error = "no live actor is named '" + m.name + "' in the cluster";
  } else {
    out.found = true;
    out.type_name = (*rec)->spec().type_name;
    if (auto* r = dynamic_cast<remote_actor_record*>(rec->get())) {
      out.node = r->remote_node();
      out.actor_id = r->id();
    } else {
      out.node = self_.name;
      std::lock_guard<std::mutex> guard{mtx_};
      for (auto& [id, h] : hosted_)
        if (h == *rec) out.actor_id = id;
    }
  }
  send_to(peer, out);
}

result<detail::actor_record_ptr> cluster_node::find_actor(const std::string& name) {
  auto local = local_->find_actor(name);
  if (local || is_head()) {
    if (!local) return local;
    if (auto* r = dynamic_cast<remote_actor_record*>(local->get()))
      return detail::actor_record_ptr{
          std::make_shared<remote_actor_record>(r->spec(), r->remote_node(), r->id())};
    return local;
  }
  wire_msg::actor_lookup m;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    m.request_id = next_request_++;
  }
  m.name = name;
  auto a = request(head_name(), m.request_id, m);
  if (!a) return a.err();
  auto* loc = std::get_if<wire_msg::actor_location>(&*a);
  if (!loc || !loc->found)
    return error{errc::unregistered, loc ? loc->error : "no answer from the head"};
  if (loc->node == self_.name) {
    std::lock_guard<std::mutex> guard{mtx_};
    if (auto i = hosted_.find(loc->actor_id); i != hosted_.end()) return i->second;
    return error{errc::unregistered, "actor '" + name + "' is gone"};
  }
  detail::actor_spec spec;
  spec.type_name = loc->type_name;
  spec.options.name = name;
  return detail::actor_record_ptr{
      std::make_shared<remote_actor_record>(std::move(spec), loc->node, loc->actor_id)};
}

void cluster_node::call(detail::actor_record& target, detail::task_ptr call) {
  auto* remote = dynamic_cast<remote_actor_record*>(&target);
  if (!remote) return local_->call(target, std::move(call));
  if (call->method.empty()) {
    call->result->set_error(
        {errc::unregistered,
         "a method of actor type '" + target.spec().type_name +
             "' called on another node must be registered: app.actor_type<T>(\"" +
             target.spec().type_name + "\").method(\"name\", &T::method)"});
    return;
  }
  // The reply comes back through this node's I/O thread: a caller that yields a while
  // before sleeping saves a thread wake-up per call (p50 2.2x -> 1.1x the TCP floor).
  call->result->spin_before_sleeping();
  wire_msg::actor_call m;
  m.actor_id = remote->id();
  m.method = call->method;
  m.result = to_wire(call->result->id());
  m.caller_node = self_.name;
  std::vector<key> exported;
  for (auto& a : call->args)
    m.args.push_back(export_arg(a, exported));
  {
    std::lock_guard<std::mutex> guard{mtx_};
    pending_[key_of(call->result->id())] = {call, remote->remote_node(),
                                            std::move(exported)};
  }
  send_to(remote->remote_node(), std::move(m));
}

void cluster_node::on_actor_call(wire_msg::actor_call&& m) {
  detail::actor_record_ptr rec;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (auto i = hosted_.find(m.actor_id); i != hosted_.end()) rec = i->second;
  }
  auto fail = [&](error e) {
    send_to(m.caller_node, wire_msg::task_result{m.result, to_wire(e)});
  };
  if (!rec)
    return fail({errc::actor_died, "node '" + self_.name + "' hosts no actor " +
                                       std::to_string(m.actor_id) + " (killed or gone)"});
  auto* info = local_->app().actor_info(rec->spec().type_name);
  auto* method = info ? info->find_method(m.method) : nullptr;
  if (!method)
    return fail({errc::unregistered, "actor type '" + rec->spec().type_name +
                                         "' has no method '" + m.method +
                                         "' registered"});
  if (m.args.size() != method->params.size())
    return fail({errc::type_mismatch, "method '" + m.method + "' takes " +
                                          std::to_string(method->params.size()) +
                                          " argument(s), got " +
                                          std::to_string(m.args.size())});
  auto id = from_wire(m.result);
  auto caller = m.caller_node;
  gather_args(
      m.args, method->params,
      [this, rec, method, id, caller](result<std::vector<detail::boxed_value>> args) {
        auto t = incoming(rec->spec().type_name, &method->fn, method->params,
                          method->result, id, caller, args);
        if (!t) return;
        t->method = method->name;
        if (rec->dead()) {
          t->result->set_error({errc::actor_died, rec->death_reason()});
          return;
        }
        local_->call(*rec, std::move(t));
      });
}

void cluster_node::kill(detail::actor_record& target, bool restart) {
  auto* remote = dynamic_cast<remote_actor_record*>(&target);
  if (!remote) {
    if (!restart) {
      std::lock_guard<std::mutex> guard{mtx_};
      for (auto i = hosted_.begin(); i != hosted_.end(); ++i)
        if (i->second.get() == &target) {
          hosted_.erase(i);
          break;
        }
    }
    return local_->kill(target, restart);
  }
  send_to(remote->remote_node(), wire_msg::actor_kill{remote->id()});
  target.mark_dead("killed");
}

} // namespace swarm::actors
