#include "actors/node/node_link.hpp"
#include "actors/scheduling/protocol.hpp"

#include <caf/all.hpp>

#include <cstdio>
#include <future>
#include <optional>

#include "framework/detail/ref_lender.hpp"
#include "framework/detail/wire_convert.hpp"

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::function<void()>)

namespace swarm::actors {

namespace {

using namespace std::chrono_literals;
using detail::decode;
using detail::encode;
using detail::key_of;
using detail::to_wire;

using run_fn_atom = caf::atom_constant<caf::atom("runfn")>;

constexpr auto request_timeout = std::chrono::seconds(10);
// The client times a request out; the wait for its answer here is a backstop.
constexpr auto request_backstop = request_timeout + std::chrono::seconds(5);

// Why node `self` has no answer from `node`.
error no_answer(const std::string& self, const std::string& node, const caf::error& e) {
  if (e == caf::sec::request_timeout)
    return {errc::node_unreachable, "node '" + node + "' did not answer within " +
                                        std::to_string(request_timeout.count()) + " s"};
  if (e == caf::sec::no_route_to_receiving_node)
    return {errc::node_unreachable,
            "node '" + node + "' was found dead before it answered node '" + self + "'"};
  return {errc::runtime_stopped,
          "node '" + self + "' stopped while waiting for node '" + node + "'"};
}

/// Runs posted functions off the I/O thread (they may block: connects, lookups). It takes
/// an argument it does not need: CAF 0.17 binds a null argument tuple for a function
/// actor spawned with none (UBSan).
caf::behavior agent_behavior(caf::event_based_actor*, node_link*) {
  return {
      [](run_fn_atom, const std::function<void()>& f) { f(); },
  };
}

} // namespace

void release_sink::send(const std::string& node, const wire_msg::message& m) {
  std::lock_guard<std::mutex> guard{mtx};
  if (node == self) {
    if (here) here(m);
  } else if (net) {
    (void)net->send(node, m);
  }
}

void release_sink::free_remote(const std::string& node, const object_id& id) {
  std::lock_guard<std::mutex> guard{mtx};
  if (!net) return;
  (void)net->send(node, wire_msg::object_free{to_wire(id)});
  forget(id);
}

void release_sink::freed_here(const object_id& id) {
  std::lock_guard<std::mutex> guard{mtx};
  if (freed) freed(id);
}

void release_sink::unborrowed(const object_key& k) {
  // Called outside the lock: telling the owner may run it on this thread, and it may
  // let go of other borrowed slots.
  std::function<void(const object_key&)> tell;
  {
    std::lock_guard<std::mutex> guard{mtx};
    tell = unborrow;
  }
  if (tell) tell(k);
}

node_link::node_link(cluster_config config, const std::string& node)
    : cfg(std::move(config)) {
  auto spec = cfg.find(node);
  if (!spec) throw failure{spec.err()};
  self = **spec;
  index = self.owner_index != 0 ? uint64_t{self.owner_index} - 1
                                : static_cast<uint64_t>(*spec - cfg.nodes.data());
}

uint64_t node_link::new_owner_id() {
  return ((index + 1) << owner_index_shift) | owners.next();
}

bool node_link::earlier_owner(uint64_t id) const {
  return (id >> owner_index_shift) == index + 1 && !owners.made(id & owner_counter_mask);
}

void node_link::start_agent() {
  agent = local->system().spawn<caf::detached>(agent_behavior, this);
}

void node_link::send_while_open(const std::string& node, wire_msg::message m) {
  std::shared_lock<std::shared_mutex> alive{alive_mtx};
  if (!closing) send_to(node, std::move(m));
}

result<std::pair<std::string, uint16_t>>
node_link::address_of(const std::string& node) const {
  if (auto spec = cfg.find(node)) return std::pair{(*spec)->address, (*spec)->port};
  // A node that joined by the head's address is reached where its row says.
  auto peers = members.get();
  if (auto i = peers->find(node); i != peers->end() && !i->second.info.client)
    return std::pair{i->second.info.address, i->second.info.port};
  return error{errc::node_unreachable,
               "node '" + node + "' is in neither the cluster file nor the node table of '" +
                   self.name + "'"};
}

result<void> node_link::connect_to(const std::string& node) {
  if (net->connected(node)) return {};
  auto where = address_of(node);
  if (!where) return where.err();
  auto& [address, port] = *where;
  auto peer = net->connect(node, address, port, 5s);
  if (!peer)
    return error{peer.err().code,
                 "cannot reach node '" + node + "': " + peer.err().message};
  if (*peer != node)
    return error{errc::node_unreachable, address + ":" + std::to_string(port) +
                                             " is node '" + *peer + "', not '" + node +
                                             "'"};
  return {};
}

void node_link::send_to(const std::string& node, wire_msg::message m) {
  if (node == self.name) {
    deliver_here(node, std::move(m));
    return;
  }
  auto sent = net->send(node, m);
  if (sent) return;
  post([this, node, m = std::move(m), why = sent.err().message]() mutable {
    // A client is not dialed back: one of the cluster waits here until it connects, and
    // so does one this node's table does not list yet (the head's row of it may still be
    // on its way, behind the work whose answer this is); one the table shows gone left.
    if (!address_of(node)) {
      if (!gone(node))
        hold_for(node, std::move(m));
      else
        local->log().debug("an answer to client '" + node + "' is dropped: it left");
      return;
    }
    undelivered(node, m, why);
  });
}

std::optional<std::pair<std::string, uint16_t>>
node_link::resolve(const std::string& node) const {
  if (gone(node)) return std::nullopt;
  auto where = address_of(node);
  if (!where) return std::nullopt;
  return *where;
}

bool node_link::reachable(const std::string& node) const {
  return net->connected(node) || resolve(node).has_value();
}

void node_link::undelivered(const std::string& node, const wire_msg::message& m,
                            const std::string& why) {
  const wire_msg::object_ref_id* id = nullptr;
  if (auto* t = std::get_if<wire_msg::task_submit>(&m)) id = &t->result;
  if (auto* c = std::get_if<wire_msg::actor_call>(&m)) id = &c->result;
  if (id)
    owner.result({}, {*id, to_wire(error{errc::node_unreachable,
                                         "cannot reach node '" + node + "': " + why})});
  else
    local->log().debug("a message for node '" + node + "' is dropped: " + why);
}

uint64_t node_link::incarnation_of(const std::string& node) const {
  auto peers = members.get();
  auto i = peers->find(node);
  return i != peers->end() ? i->second.info.incarnation : 0;
}

bool node_link::gone(const std::string& node) const {
  auto peers = members.get();
  auto i = peers->find(node);
  return i != peers->end() && !i->second.info.alive;
}

bool node_link::alive(const std::string& node) const {
  auto peers = members.get();
  auto i = peers->find(node);
  return i != peers->end() && i->second.info.alive;
}

void node_link::hold_for(const std::string& node, wire_msg::message m) {
  constexpr size_t most = 1 << 16;
  flush_held(node); // in order, and what waited too long goes
  if (net->send(node, m)) return;
  auto& h = held_[node];
  if (h.messages.empty()) h.until = std::chrono::steady_clock::now() + cfg.join_wait;
  if (h.messages.size() >= most) {
    local->log().warn("a message for client '" + node + "' is dropped: " +
                      std::to_string(most) + " wait already until it connects");
    return;
  }
  h.messages.push_back(std::move(m));
  // Its connection may have come up since the send failed; its peer_up is then queued.
}

void node_link::flush_held(const std::string& node) {
  auto now = std::chrono::steady_clock::now();
  for (auto i = held_.begin(); i != held_.end();) {
    auto& [name, h] = *i;
    bool expired = now > h.until || gone(name);
    if (!expired && !(name == node && net->connected(name))) {
      ++i;
      continue;
    }
    if (expired) {
      // A warning for a member; no member (`swarm status`, the dashboard's) often
      // leaves before its answer.
      local->log().write(members.get()->count(name) ? log_level::warn : log_level::debug,
                         std::to_string(h.messages.size()) + " message(s) for '" + name +
                             "' are dropped: it did not connect to this node within " +
                             std::to_string(cfg.join_wait.count()) + " ms, or left");
    } else {
      while (!h.messages.empty() && net->send(name, h.messages.front()))
        h.messages.pop_front();
      if (!h.messages.empty()) { // it went again meanwhile
        ++i;
        continue;
      }
    }
    i = held_.erase(i);
  }
}

void node_link::peer_up(const std::string& node) {
  post([this, node] { flush_held(node); });
}

void node_link::post(std::function<void()> f) {
  // Before the agent runs (while joining) there is nothing to post to; what is posted
  // then (dialing peers of a node table) is redone on the next table.
  if (agent) caf::anon_send(agent, run_fn_atom::value, std::move(f));
}

void node_link::post_after(std::chrono::milliseconds delay, std::function<void()> f) {
  if (agent) caf::delayed_anon_send(agent, delay, run_fn_atom::value, std::move(f));
}

result<wire_msg::message> node_link::request(const std::string& node,
                                             wire_msg::message m) {
  auto out = request(node, std::move(m), request_backstop);
  if (!out && out.err().code == errc::timeout)
    return no_answer(self.name, node, caf::sec::request_timeout);
  return out;
}

result<wire_msg::message> node_link::request(const std::string& node, wire_msg::message m,
                                             std::chrono::milliseconds wait) {
  if (node != self.name)
    if (auto ok = connect_to(node); !ok) return ok.err();
  result<wire_msg::message> out = error{errc::runtime_stopped, ""};
  caf::scoped_actor asker{local->system()};
  asker->request(control, wait, request_atom::value, node, std::move(m))
      .receive([&](wire_msg::message& a) { out = std::move(a); },
               [&](caf::error& e) {
                 out = e == caf::sec::request_timeout
                           ? error{errc::timeout,
                                   "no answer from node '" + node + "' within " +
                                       std::to_string(wait.count()) + " ms"}
                           : no_answer(self.name, node, e);
               });
  return out;
}

void node_link::request_then(const std::string& node, wire_msg::message m,
                             std::function<void(result<wire_msg::message>)> then) {
  // The node's name as an argument: CAF 0.17 binds a null tuple for a function actor
  // spawned with none (UBSan).
  local->system().spawn(
      [this, m = std::move(m), then = std::move(then)](caf::event_based_actor* asker,
                                                       const std::string& to) mutable {
        asker->request(control, request_backstop, request_atom::value, to, std::move(m))
            .then([then](wire_msg::message& a) { then(std::move(a)); },
                  [this, then, to](caf::error& e) { then(no_answer(self.name, to, e)); });
      },
      node);
}

void node_link::place(const resource_set& demand, work_needs needs,
                      const std::vector<wire_msg::arg>& args, int32_t priority,
                      std::function<void(result<std::string>)> then,
                      std::vector<std::string> avoid) {
  placement_request req;
  req.avoid = std::move(avoid);
  req.demand = demand;
  req.needs = std::move(needs);
  req.priority = priority;
  for (auto& a : args)
    if (auto* r = std::get_if<wire_msg::remote_ref>(&a))
      req.input_bytes.emplace_back(r->node, r->size);
  req.then = std::move(then);
  caf::anon_send(global, place_atom::value, std::move(req));
}

result<std::string> node_link::place_now(const resource_set& demand, work_needs needs) {
  auto chosen = std::make_shared<std::promise<result<std::string>>>();
  auto f = chosen->get_future();
  place(demand, std::move(needs), {}, 0,
        [chosen](result<std::string> r) { chosen->set_value(std::move(r)); });
  if (f.wait_for(std::chrono::seconds(10)) != std::future_status::ready)
    return error{errc::timeout, "the global scheduler on the head '" + head_name() +
                                    "' did not place an actor within 10 s"};
  return f.get();
}

wire_msg::arg node_link::export_arg(const detail::task_arg& a,
                                    std::vector<key>& exported) {
  detail::boxed_value v = a.value;
  object_id id{new_owner_id(), 0};
  if (a.ref)
    // A holder this node cannot reach is not named: its own copy is shipped.
    if (auto where = a.ref->primary_copy();
        where && where->node != self.name && reachable(where->node)) {
      wire_msg::remote_ref r{to_wire(a.ref->id()), where->node, where->size,
                             where->replicas};
      // This node's copy serves readers too once it is in.
      if (a.ref->done()) r.holders.push_back(self.name);
      return r;
    }
  if (a.ref) {
    auto r = a.ref->read();
    if (r) v = *r;
    id = a.ref->id();
  }
  if (auto small = inline_value(v)) return std::move(*small);
  auto k = key_of(id);
  // Held before the task that pulls it is sent, so its pulls find it.
  auto size = hold(k, v, true);
  exported.push_back(k);
  return wire_msg::remote_ref{to_wire(id), self.name, size};
}

bool node_link::travels_inline(const detail::boxed_value& v) const {
  // The in-memory size bounds the encoded size from above, without encoding.
  return v.type->byte_size(v.ptr.get()) <= cfg.inline_threshold;
}

std::optional<wire_msg::value> node_link::inline_value(const detail::boxed_value& v,
                                                       bool refs_allowed) {
  if (!travels_inline(v)) return std::nullopt;
  detail::ref_counter refs{values};
  wire_msg::value out{v.type->name, encode(v, &refs)};
  if (refs.count() > 0 && !refs_allowed) return std::nullopt;
  return out;
}

wire_msg::task_result node_link::travel(const object_id& id, const detail::boxed_value& v,
                                        std::shared_ptr<const void> keep) {
  wire_msg::task_result r;
  r.result = to_wire(id);
  if (auto small = inline_value(v, false))
    r.outcome = std::move(*small);
  else // held before the reader hears of it, so its pulls find it
    r.outcome =
        wire_msg::stored_at{self.name, hold(key_of(id), v, false, std::move(keep))};
  return r;
}

std::shared_ptr<detail::stream_sink> node_link::stream_to(const std::string& reader,
                                                          const object_id& result,
                                                          uint64_t items_owner,
                                                          uint32_t window) {
  stream_route route;
  route.send = [this, reader](wire_msg::message m) {
    send_while_open(reader, std::move(m));
  };
  route.connected = [this, reader] {
    std::shared_lock<std::shared_mutex> alive{alive_mtx};
    return !closing && reachable(reader);
  };
  route.travel = [this](const object_id& id, const detail::boxed_value& v) {
    return travel(id, v);
  };
  auto k = key_of(result);
  route.ended = [streams = streams, k] { caf::anon_send(streams, erase_atom::value, k); };
  auto sender =
      std::make_shared<stream_sender>(std::move(route), result, items_owner, window);
  caf::anon_send(streams, put_atom::value, k, std::weak_ptr<detail::stream_sink>{sender});
  return sender;
}

hold_request node_link::hold_request_for(const key& k, const detail::boxed_value& v,
                                         bool exported,
                                         std::shared_ptr<const void> keep) {
  return {k, v, std::make_shared<const bulk_layout>(v.type->lay_out(v.ptr.get(), values)),
          exported, std::move(keep)};
}

uint64_t node_link::hold(const key& k, const detail::boxed_value& v, bool exported,
                         std::shared_ptr<const void> keep) {
  auto r = hold_request_for(k, v, exported, std::move(keep));
  auto size = r.layout->size();
  caf::anon_send(objects, hold_atom::value, std::move(r));
  return size;
}

void node_link::release_exports(const std::vector<key>& exported) {
  if (!exported.empty()) caf::anon_send(objects, release_atom::value, exported);
}

void node_link::gather_args(const std::vector<wire_msg::arg>& args,
                            const std::vector<const detail::type_descriptor*>& params,
                            double weight, values_cb done) {
  done = after_borrows(std::move(done));
  // Filled here, then only by the fetches' callbacks, which all run on the object
  // manager's thread.
  struct gather {
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
      auto d = decode(*v, params[i], values);
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
    fetch(
        std::get<wire_msg::remote_ref>(args[i]), params[i],
        [g, i](result<detail::boxed_value> v) {
          if (v)
            g->values[i] = std::move(*v);
          else if (!g->failed)
            g->failed = v.err();
          if (--g->missing > 0) return;
          if (g->failed)
            g->done(*g->failed);
          else
            g->done(std::move(g->values));
        },
        weight);
}

void node_link::fetch(const wire_msg::remote_ref& ref,
                      const detail::type_descriptor* type, value_cb done, double weight) {
  caf::anon_send(objects, fetch_atom::value,
                 fetch_request{ref, type, after_borrows(std::move(done)), weight});
}

template <class T>
std::function<void(result<T>)>
node_link::after_borrows(std::function<void(result<T>)> done) {
  auto before = borrows_made.load(std::memory_order_acquire);
  return [this, before, done = std::move(done)](result<T> v) {
    if (!v || borrows_made.load(std::memory_order_acquire) == before)
      return done(std::move(v));
    owner.barrier([done, v = std::move(v)]() mutable { done(std::move(v)); });
  };
}

detail::task_ptr
node_link::incoming(std::string name, const detail::invoker* fn,
                    const std::vector<const detail::type_descriptor*>& params,
                    const detail::type_descriptor* result_type, const object_id& id,
                    const std::string& reply_to,
                    result<std::vector<detail::boxed_value>>& args, uint32_t replicas,
                    bool latency_critical, uint64_t actor_id, bool state_for_owner) {
  auto t = std::make_shared<detail::task_spec>();
  t->name = std::move(name);
  t->fn = fn;
  t->params = params;
  t->result_type = result_type;
  t->owner = id.owner;
  t->origin = reply_to;
  t->result = std::make_shared<detail::object_slot>(id);
  if (state_for_owner) t->state_for_owner = std::make_shared<detail::carried_state>();
  reply_when_done(t->result, reply_to, replicas, latency_critical, actor_id,
                  t->state_for_owner);
  if (!args) {
    t->result->set_error(args.err());
    return nullptr;
  }
  for (auto& v : *args)
    t->args.push_back({std::move(v), nullptr});
  return t;
}

error node_link::named_here(error e) const {
  if (e.message.find("'" + self.name + "'") == std::string::npos)
    e.message += " (on node '" + self.name + "')";
  return e;
}

void node_link::reply_when_done(const detail::slot_ptr& slot, const std::string& to,
                                uint32_t replicas, bool latency_critical,
                                uint64_t actor_id,
                                std::shared_ptr<detail::carried_state> carried) {
  std::weak_ptr<detail::object_slot> weak = slot;
  // The life the work came to: a run the head found dead with it does not count.
  slot->when_done([this, weak, to, replicas, latency_critical, actor_id, carried,
                   came_to = life.load()] {
    auto s = weak.lock();
    // A task that came in a life the head has ended since (this node was fenced)
    // answers nothing: its owner runs it again, and this run was cancelled or does not
    // count. (Calls to actors hosted here are fenced with their instances.)
    if (!s || (actor_id == 0 && came_to != life.load())) return;
    wire_msg::task_result r;
    r.result = to_wire(s->id());
    r.latency_critical = latency_critical;
    r.actor_id = actor_id;
    r.life = came_to;
    if (carried && carried->seq != 0) {
      r.state_seq = carried->seq;
      r.state = std::move(carried->bytes);
    }
    auto v = s->read();
    if (!v) {
      r.outcome = to_wire(named_here(v.err()));
    } else if (replicas <= 1) {
      r.outcome = travel(s->id(), *v, s).outcome;
    } else if (auto small = inline_value(*v, false)) {
      r.outcome = std::move(*small);
    } else {
      // The owner hears of it once its replicas are kept, and pulls from them too.
      auto held = hold_request_for(key_of(s->id()), *v, false, s);
      auto done = [this, r, to,
                   size = held.layout->size()](std::vector<std::string> kept) mutable {
        r.outcome = wire_msg::stored_at{self.name, size, std::move(kept)};
        send_to(to, std::move(r));
      };
      caf::anon_send(
          objects, replicate_atom::value,
          replicate_request{std::move(held), replicas - 1, std::move(done), to});
      return;
    }
    send_to(to, std::move(r));
  });
}

void node_link::replicate(const detail::slot_ptr& slot, uint32_t copies) {
  auto v = slot->read();
  if (copies <= 1 || !v || travels_inline(*v)) return;
  caf::anon_send(
      objects, replicate_atom::value,
      replicate_request{hold_request_for(key_of(slot->id()), *v, false, nullptr),
                        copies - 1, nullptr});
}

} // namespace swarm::actors
