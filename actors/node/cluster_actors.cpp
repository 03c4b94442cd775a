#include "actors/node/cluster_actors.hpp"

#include <caf/all.hpp>

#include "actors/user_actors/actor_host.hpp"
#include "actors/user_actors/remote_actor_record.hpp"
#include "framework/detail/wire_convert.hpp"

namespace swarm::actors {

namespace {

using detail::decode;
using detail::encode;
using detail::from_list;
using detail::from_wire;
using detail::to_list;
using detail::to_wire;

// Tries of a new actor's creation whose node does not answer (each waits for its answer
// up to the request timeout, 10 s).
constexpr int initial_placements = 3;

} // namespace

result<detail::actor_record_ptr> cluster_actors::spawn(detail::actor_spec spec) {
  auto target = spec.options.node;
  bool placed = true;
  // The head's global scheduler chooses a node for it.
  auto place = [&] {
    return link_.place_now(spec.options.resources,
                           work_needs::actor_type(spec.type_name));
  };
  // A client's actors live on the cluster.
  if (target.empty() && (link_.self.client || !spec.options.resources.fits_in(
                                                  link_.local->total_resources()))) {
    if (link_.is_head()) {
      auto where = place();
      if (!where) return where.err();
      target = *where;
    } else {
      // The head's global scheduler places it and forwards the request.
      target = link_.head_name();
      placed = false;
    }
  }
  if (target.empty() || target == link_.self.name) {
    if (spec.options.name.empty()) return link_.local->spawn(std::move(spec));
    // Names are cluster-wide: the head's control store holds them.
    auto name = spec.options.name;
    spec.options.name.clear();
    spec.cluster_name = name;
    auto rec = link_.local->spawn(std::move(spec));
    if (!rec) return rec;
    auto id = next_actor_++;
    host(id, *rec);
    wire_msg::actor_register reg{0,
                                 name,
                                 id,
                                 link_.self.name,
                                 (*rec)->spec().type_name,
                                 (*rec)->spec().options.max_task_retries};
    if (auto ok = register_name(*rec, reg); !ok) {
      link_.local->kill(**rec, false);
      return ok.err();
    }
    return rec;
  }
  auto* info = link_.local->app().actor_info(spec.type_name);
  if (!info) return error{errc::unregistered, "actor type '" + spec.type_name + "'"};
  wire_msg::actor_create m;
  m.type_name = spec.type_name;
  for (auto& v : spec.constructor_args)
    m.args.push_back(wire_msg::value{v.type->name, encode(v, link_.values)});
  m.name = spec.options.name;
  m.resources = to_list(spec.options.resources);
  m.max_restarts = static_cast<int32_t>(spec.options.max_restarts);
  m.owner_node = link_.self.name;
  m.placed = placed;
  m.checkpoint_every = spec.options.checkpoint_every;
  m.checkpoint = spec.checkpoint; // a state to start from (a durable checkpoint)
  m.durable_checkpoints = spec.options.durable_checkpoints;
  m.max_concurrency = spec.options.max_concurrency;
  m.max_task_retries = spec.options.max_task_retries;
  m.answers_kept = spec.options.answers_kept;
  auto at = create_on(target, m);
  // The node chosen did not answer (it froze or died as the actor was made there): an
  // actor not pinned to it is placed again, once that loss has had time to be seen.
  for (int attempt = 1; !at && at.err().code == errc::node_unreachable &&
                        spec.options.node.empty() && attempt < initial_placements;
       ++attempt) {
    link_.local->log().warn("creating actor '" + m.type_name + "': " + at.err().message +
                            "; placing it again (" + std::to_string(attempt + 1) +
                            " of " + std::to_string(initial_placements) + ")");
    if (link_.is_head()) {
      auto where = place();
      if (!where) return where.err();
      target = *where;
    }
    at = create_on(target, m);
  }
  if (!at) return at.err();
  auto rec = track(std::move(spec), at->first, at->second, std::move(m));
  if (auto ok = register_name(rec); !ok) {
    link_.send_to(at->first, wire_msg::actor_kill{at->second});
    rec->mark_dead(ok.err().message);
    return ok.err();
  }
  return detail::actor_record_ptr{rec};
}

result<void> cluster_actors::register_name(const std::shared_ptr<remote_actor_record>& rec) {
  if (rec->spec().options.name.empty()) return {};
  // On the head the row is this record: a restart elsewhere moves it, and lookups see it.
  return register_name(rec, {0, rec->spec().options.name, rec->id(), rec->remote_node(),
                             rec->spec().type_name, rec->spec().options.max_task_retries});
}

result<void> cluster_actors::register_name(detail::actor_record_ptr rec,
                                           const wire_msg::actor_register& reg) {
  if (link_.is_head()) {
    auto ok = link_.local->gcs().register_name(reg.name, std::move(rec));
    if (!ok || !*ok)
      return error{errc::invalid_argument, ok ? "actor name '" + reg.name +
                                                    "' is already taken"
                                              : ok.err().message};
    return {};
  }
  auto a = link_.request(link_.head_name(), reg);
  if (!a) return error{errc::invalid_argument, a.err().message};
  auto* loc = std::get_if<wire_msg::actor_location>(&*a);
  if (!loc) return error{errc::invalid_argument, "unexpected answer to actor_register"};
  if (!loc->error.empty()) return error{errc::invalid_argument, loc->error};
  return {};
}

cluster_actors::cluster_actors(node_link& link)
    : link_(link), first_actor_(link.life.load() << 12), next_actor_(first_actor_) {}

std::shared_ptr<remote_actor_record>
cluster_actors::track(detail::actor_spec spec, const std::string& node, uint64_t id,
                      std::optional<wire_msg::actor_create> created_by) {
  // An actor this node created lives while its handles here do (as in Ray); a named one
  // lives until killed, since anyone may look it up.
  remote_actor_record::release_fn release;
  if (created_by && spec.options.name.empty())
    release = [sink = link_.releases](const std::string& host, uint64_t actor_id) {
      sink->send(host, wire_msg::actor_kill{actor_id});
    };
  auto rec = std::make_shared<remote_actor_record>(
      std::move(spec), node, id, std::move(created_by), std::move(release));
  caf::anon_send(link_.directory, track_atom::value, rec);
  return rec;
}

void cluster_actors::restart_actor(const std::shared_ptr<remote_actor_record>& rec) {
  if (!rec->owned())
    return follow_actor(rec, rec->remote_node(), rec->id(),
                        std::chrono::steady_clock::now() + follow_timeout());
  auto& o = rec->spec().options;
  auto first = restart_try{1, {}, std::chrono::steady_clock::now() + link_.cfg.join_wait};
  if (o.node.empty()) return place_again(rec, rec->recreate(), first);
  if (o.move_if_node_lost) {
    link_.local->log().warn("actor '" + rec->spec().type_name + "' leaves node '" +
                            o.node +
                            "', where it was pinned: that node is lost, and "
                            "actor_options::move_if_node_lost lets it move");
    return place_again(rec, rec->recreate(), first);
  }
  link_.local->log().warn("actor '" + rec->spec().type_name + "' waits for node '" +
                          o.node + "', where it is pinned, to come back (up to " +
                          std::to_string(link_.cfg.join_wait.count()) +
                          " ms); its calls wait with it");
  restart_pinned(rec, rec->recreate(),
                 std::chrono::steady_clock::now() + link_.cfg.join_wait);
}

namespace {

// A restart that failed: the actor is dead, and the calls that waited for it fail.
void give_up(const node_log& log, remote_actor_record& rec, const std::string& type,
             const error& e) {
  log.warn("actor of type '" + type + "' could not be restarted: " + e.to_string());
  for (auto& c :
       rec.abandon("actor of type '" + type + "' could not be restarted: " + e.message))
    c->result->set_error({errc::actor_died, rec.death_reason()});
}

// Where the actor an `actor_create` made lives, from the answer `a`.
result<std::pair<std::string, uint64_t>> created_at(const result<wire_msg::message>& a) {
  if (!a) return a.err();
  auto* created = std::get_if<wire_msg::actor_created>(&*a);
  if (!created) return error{errc::invalid_argument, "unexpected answer to actor_create"};
  if (!created->ok) return from_wire(created->error);
  return std::make_pair(created->node, created->actor_id);
}

} // namespace

result<std::pair<std::string, uint64_t>>
cluster_actors::create_on(const std::string& target, const wire_msg::actor_create& m) {
  if (target == link_.self.name) {
    auto id = host_actor(m);
    if (!id) return id.err();
    return std::make_pair(link_.self.name, *id);
  }
  auto sent = m;
  if (m.placed) sent.life = link_.incarnation_of(target);
  return created_at(link_.request(target, sent));
}

void cluster_actors::create_on_then(const std::string& target,
                                    const wire_msg::actor_create& m, created_fn then) {
  if (target == link_.self.name) return then(create_on(target, m));
  auto sent = m;
  if (m.placed) sent.life = link_.incarnation_of(target);
  link_.request_then(target, std::move(sent),
                     [this, then = std::move(then)](result<wire_msg::message> a) {
                       link_.post([then, at = created_at(a)] { then(at); });
                     });
}

void cluster_actors::resend_at(remote_actor_record& rec, const std::string& node,
                               uint64_t id) {
  for (auto& c : rec.relocate(node, id))
    call(rec, std::move(c));
}

void cluster_actors::restarted(const std::shared_ptr<remote_actor_record>& rec,
                               const std::pair<std::string, uint64_t>& at) {
  auto held = rec->relocate(at.first, at.second);
  if (!link_.is_head())
    if (auto ok = register_name(rec); !ok)
      link_.local->log().warn(
          "actor '" + rec->spec().options.name + "' restarted on node '" + at.first +
          "', but its name still points to where it was: " + ok.err().message);
  for (auto& c : held)
    call(*rec, std::move(c));
}

void cluster_actors::restart_pinned(const std::shared_ptr<remote_actor_record>& rec,
                                    wire_msg::actor_create m,
                                    std::chrono::steady_clock::time_point until) {
  auto& node = rec->spec().options.node;
  m.placed = true;
  // Back once the membership shows it alive again: a new life of it.
  if (!link_.gone(node) && link_.reachable(node))
    return create_on_then(node, m, [this, rec, m, until](const created& at) {
      pinned_tried(rec, m, until, at);
    });
  pinned_tried(rec, m, until, error{errc::node_unreachable, "not back yet"});
}

void cluster_actors::pinned_tried(const std::shared_ptr<remote_actor_record>& rec,
                                  const wire_msg::actor_create& m,
                                  std::chrono::steady_clock::time_point until,
                                  const created& at) {
  auto& node = rec->spec().options.node;
  if (at) return restarted(rec, *at);
  if (at.err().code != errc::node_unreachable)
    return give_up(link_.local->log(), *rec, m.type_name, at.err());
  if (std::chrono::steady_clock::now() < until) {
    link_.post_after(std::chrono::milliseconds(200),
                     [this, rec, m, until] { restart_pinned(rec, m, until); });
    return;
  }
  give_up(link_.local->log(), *rec, m.type_name,
          error{errc::node_unreachable,
                "it is pinned to node '" + node +
                    "' (actor_options::node), which did not come back within " +
                    std::to_string(link_.cfg.join_wait.count()) +
                    " ms (join_wait_ms); actor_options::move_if_node_lost lets it move"});
}

void cluster_actors::place_again(const std::shared_ptr<remote_actor_record>& rec,
                                 wire_msg::actor_create m, restart_try t) {
  // Wherever its resources fit now. A node chosen just as it died refuses the connection
  // before its loss is known, or one frozen answers nothing until it is found dead; the
  // nodes that fit may all be dead for now: the actor is placed again on a timer, up to
  // join_wait, as a pinned one waits for its node.
  if (rec->dead()) return; // killed meanwhile
  std::string target = link_.head_name();
  m.placed = false;
  if (link_.is_head()) {
    auto demand = from_list(m.resources);
    auto where = demand ? link_.place_now(*demand, work_needs::actor_type(m.type_name))
                        : result<std::string>{demand.err()};
    if (!where) return placed_again(rec, m, std::move(t), target, where.err());
    target = *where;
    m.placed = true;
  }
  // Not waited for here: the agent has other work meanwhile.
  create_on_then(target, m, [this, rec, m, t, target](const created& at) {
    placed_again(rec, m, t, target, at);
  });
}

void cluster_actors::placed_again(const std::shared_ptr<remote_actor_record>& rec,
                                  const wire_msg::actor_create& m, restart_try t,
                                  const std::string& target, const created& at) {
  if (at) return restarted(rec, *at);
  auto e = at.err();
  if (!t.before.empty()) e.message += " (its try before: " + t.before + ")";
  // A node that fit was chosen and was lost before it answered (which may take longer
  // than join_wait): the wait for a node to hold it begins again.
  auto now = std::chrono::steady_clock::now();
  if (m.placed && e.code == errc::node_unreachable)
    t.until = std::max(t.until, now + link_.cfg.join_wait);
  if (e.code != errc::node_unreachable || now >= t.until)
    return give_up(link_.local->log(), *rec, m.type_name, e);
  // Asked of the head, which places it: the head, or the node it chose, is the
  // unreachable one, and the error names which.
  auto where = m.placed ? "node '" + target + "' is unreachable"
               : link_.is_head()
                   ? std::string{"no node that fits it is alive"}
                   : std::string{"the head, or the node it chose, is unreachable"};
  ++t.attempt;
  if (t.attempt == 2 || t.attempt % 25 == 0)
    link_.local->log().warn(
        "restarting actor '" + m.type_name + "': " + where + " (" + at.err().message +
        "); placing it again (try " + std::to_string(t.attempt) + ", for up to " +
        std::to_string(link_.cfg.join_wait.count()) + " ms, join_wait_ms)");
  t.before = at.err().message;
  link_.post_after(std::chrono::milliseconds(200),
                   [this, rec, m, t] { place_again(rec, m, t); });
}

void cluster_actors::create_actor_here(wire_msg::actor_create m) {
  wire_msg::actor_created out;
  out.request_id = m.request_id;
  out.node = link_.self.name;
  // The answer goes to whoever asked, even when the head placed it here.
  auto peer = m.owner_node;
  auto fail = [&](error e) {
    out.error = to_wire(link_.named_here(std::move(e)));
    link_.send_to(peer, out);
  };
  if (!m.placed && link_.is_head()) {
    auto demand = from_list(m.resources);
    if (!demand) return fail(demand.err());
    return link_.place(*demand, work_needs::actor_type(m.type_name), {}, 0,
                       [this, m](result<std::string> where) mutable {
                         m.placed = true;
                         if (!where) {
                           wire_msg::actor_created no{m.request_id, 0, link_.self.name,
                                                      to_wire(where.err()), false};
                           return link_.send_to(m.owner_node, no);
                         }
                         m.life = link_.incarnation_of(*where);
                         if (*where == link_.self.name)
                           return link_.post([this, m] { create_actor_here(m); });
                         link_.send_to(*where, std::move(m));
                       });
  }
  // Meant for an earlier life of this node (held while it was cut off): the owner
  // restarted the actor elsewhere meanwhile, or places it again.
  if (m.life != 0 && m.life != link_.life)
    return fail({errc::node_unreachable,
                 "node '" + link_.self.name +
                     "' was asked to create an actor for its earlier life, which the "
                     "head found dead"});
  auto id = host_actor(m);
  if (!id) return fail(id.err());
  out.actor_id = *id;
  out.ok = true;
  link_.send_to(peer, out);
}

result<uint64_t> cluster_actors::host_actor(const wire_msg::actor_create& m) {
  auto* info = link_.local->app().actor_info(m.type_name);
  if (!info)
    return error{errc::unregistered, "node '" + link_.self.name +
                                         "' has no actor type '" + m.type_name +
                                         "' registered"};
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
    return error{errc::type_mismatch,
                 "actor type '" + m.type_name + "' has no constructor(" + sig +
                     ") registered for creation from other nodes: register it with "
                     ".constructor<...>()"};
  }
  std::vector<detail::boxed_value> args;
  for (size_t i = 0; i < m.args.size(); ++i) {
    auto d = decode(m.args[i], ctor->params[i], link_.values);
    if (!d) return d.err();
    args.push_back(std::move(*d));
  }
  detail::actor_spec spec;
  spec.type_name = m.type_name;
  spec.factory = [make = ctor->make, args] { return make(args); };
  spec.options.max_restarts = static_cast<uint32_t>(std::max(0, m.max_restarts));
  // Its owner registers the name, and moves it when it restarts the actor elsewhere.
  spec.cluster_name = m.name;
  if (m.owner_node != link_.self.name) spec.owner_node = m.owner_node;
  if (auto r = from_list(m.resources)) spec.options.resources = *r;
  spec.options.node = link_.self.name;
  spec.options.checkpoint_every = m.checkpoint_every;
  spec.options.durable_checkpoints = m.durable_checkpoints;
  spec.options.max_concurrency = std::max<uint32_t>(1, m.max_concurrency);
  spec.options.max_task_retries = m.max_task_retries;
  spec.options.answers_kept = m.answers_kept;
  spec.checkpoint = m.checkpoint;
  auto id = next_actor_++;
  // Saved states go to the owner, which restarts the actor if this node dies.
  if (m.checkpoint_every > 0 && m.owner_node != link_.self.name) {
    spec.on_checkpoint = [this, owner = m.owner_node, id](const std::vector<uint8_t>& s,
                                                          uint64_t seq, bool answer) {
      if (answer && link_.gone(owner)) return false;
      link_.send_to(owner, wire_msg::actor_checkpoint{id, s, seq, answer});
      return true;
    };
    spec.checkpoint_resend = link_.cfg.node_timeout;
  }
  auto rec = spawn(std::move(spec));
  if (!rec) return rec.err();
  host(id, *rec);
  return id;
}

void cluster_actors::host(uint64_t id, detail::actor_record_ptr rec) {
  if (auto* h = dynamic_cast<host_record*>(rec.get())) h->set_owner_id(id);
  caf::scoped_actor self{link_.local->system()};
  self->request(link_.directory, std::chrono::seconds(10), host_atom::value, id,
                std::move(rec))
      .receive([](bool) {},
               [&](caf::error&) {
                 // Only a stopping node's directory does not answer; calls then fail.
                 link_.local->log().warn("actor " + std::to_string(id) +
                                         " is not reachable from other nodes: the node "
                                         "is stopping");
               });
}

void cluster_actors::call(detail::actor_record& target, detail::task_ptr call) {
  auto* remote = dynamic_cast<remote_actor_record*>(&target);
  if (!remote) {
    // An actor stopped here as its owner restarted it elsewhere: its handles here
    // follow it there, like those of actors on other nodes.
    if (target.moved())
      if (auto* h = dynamic_cast<host_record*>(&target))
        return this->call(*follower(*h), std::move(call));
    return link_.local->call(target, std::move(call));
  }
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
  auto rec = std::static_pointer_cast<remote_actor_record>(remote->shared_from_this());
  // In call order, each once its argument futures are ready.
  if (rec->enqueue(std::move(call))) send_calls(rec);
}

void cluster_actors::send_calls(const std::shared_ptr<remote_actor_record>& rec) {
  detail::slot_ptr blocked;
  while (auto c = rec->next_ready(blocked))
    send_call(rec, std::move(c));
  if (!blocked) return;
  std::weak_ptr<remote_actor_record> weak = rec;
  blocked->when_done([this, weak] {
    // Off the thread that completed the future: sending may encode large arguments.
    link_.post([this, weak] {
      if (auto r = weak.lock(); r && r->resume()) send_calls(r);
    });
  });
}

void cluster_actors::send_call(const std::shared_ptr<remote_actor_record>& rec,
                               detail::task_ptr call) {
  if (rec->hold(call)) return; // its node died: sent once it is restarted
  for (size_t i = 0; i < call->args.size(); ++i)
    if (auto& ref = call->args[i].ref)
      if (auto v = ref->read(); !v) {
        call->result->set_error(
            {errc::dependency_failed, "argument " + std::to_string(i + 1) + " of '" +
                                          call->method + "': " + v.err().to_string()});
        return;
      }
  auto node = rec->remote_node();
  wire_msg::actor_call m;
  m.actor_id = rec->id();
  m.method = call->method;
  m.result = to_wire(call->result->id());
  m.caller_node = link_.self.name;
  m.latency_critical = call->options.latency_critical;
  m.priority = call->options.priority;
  if (call->reader) {
    m.stream_owner = call->reader->items_owner();
    m.stream_window = static_cast<uint32_t>(call->reader->window());
  }
  std::vector<object_key> exported;
  for (auto& a : call->args)
    m.args.push_back(link_.export_arg(a, exported));
  pending_call sent{std::move(call), node, std::move(exported), rec};
  sent.actor_id = m.actor_id;
  link_.owner.track(std::move(sent), node, std::move(m));
}

void cluster_actors::on_actor_call(wire_msg::actor_call&& m) {
  auto rec = link_.hosted.find(m.actor_id);
  auto fail = [&](error e) {
    link_.send_to(m.caller_node, wire_msg::task_result{
                                     m.result, to_wire(link_.named_here(std::move(e)))});
  };
  if (!rec && link_.hosted.moved(m.actor_id))
    return fail({errc::node_unreachable,
                 "actor " + std::to_string(m.actor_id) + " on node '" + link_.self.name +
                     "' was stopped when the head found the node dead: its owner "
                     "restarted it elsewhere"});
  // The caller's owner takes this error as the actor's node lost, and follows it to
  // where its owner restarted it.
  if (!rec && m.actor_id < first_actor_)
    return fail({errc::node_unreachable,
                 "actor " + std::to_string(m.actor_id) + " was hosted by an earlier " +
                     "life of node '" + link_.self.name +
                     "', whose process ended: its owner restarts it elsewhere"});
  if (!rec)
    return fail({errc::actor_died, "node '" + link_.self.name + "' hosts no actor " +
                                       std::to_string(m.actor_id) + " (killed or gone)"});
  auto* info = link_.local->app().actor_info(rec->spec().type_name);
  auto* method = info ? info->find_method(m.method) : nullptr;
  if (!method)
    return fail({errc::unregistered, "actor type '" + rec->spec().type_name +
                                         "' has no method '" + m.method +
                                         "' registered"});
  if ((m.stream_owner != 0) != (method->stream_item != nullptr))
    return fail({errc::type_mismatch,
                 "method '" + m.method + "' of actor type '" + rec->spec().type_name +
                     (method->stream_item ? "' streams here, but the caller did not ask "
                                            "for a stream"
                                          : "' does not stream here, but the caller "
                                            "asked for a stream")});
  if (m.args.size() != method->params.size())
    return fail({errc::type_mismatch, "method '" + m.method + "' takes " +
                                          std::to_string(method->params.size()) +
                                          " argument(s), got " +
                                          std::to_string(m.args.size())});
  auto id = from_wire(m.result);
  auto caller = m.caller_node;
  auto stream_owner = m.stream_owner;
  auto window = m.stream_window;
  auto urgent = m.latency_critical;
  auto priority = m.priority;
  auto instance = m.actor_id;
  // The owner's own call to an actor that saves its state for it: the answer carries it.
  bool for_owner = rec->spec().on_checkpoint && caller == rec->spec().owner_node;
  link_.gather_args(m.args, method->params, pull_weight(priority, 1),
                    [this, rec, method, id, caller, stream_owner, window, urgent,
                     priority, instance,
                     for_owner](result<std::vector<detail::boxed_value>> args) {
                      auto t = link_.incoming(rec->spec().type_name, &method->fn,
                                              method->params, method->result, id, caller,
                                              args, 1, urgent, instance, for_owner);
                      if (!t) return;
                      if (stream_owner != 0)
                        t->stream = link_.stream_to(caller, id, stream_owner, window);
                      t->method = method->name;
                      t->actor_call = true;
                      t->options.priority = priority;
                      if (rec->dead()) {
                        t->result->set_error({link_.hosted.moved(instance)
                                                  ? errc::node_unreachable
                                                  : errc::actor_died,
                                              rec->death_reason()});
                        return;
                      }
                      link_.local->call(*rec, std::move(t));
                    });
}

void cluster_actors::kill(detail::actor_record& target, bool restart) {
  auto* remote = dynamic_cast<remote_actor_record*>(&target);
  if (!remote) {
    if (!restart)
      caf::anon_send(link_.directory, unhost_atom::value, target.shared_from_this());
    return link_.local->kill(target, restart);
  }
  link_.send_to(remote->remote_node(), wire_msg::actor_kill{remote->id()});
  target.mark_dead("killed");
}

} // namespace swarm::actors
