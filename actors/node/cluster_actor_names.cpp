// A cluster node's actor names: registered with the head, looked up there, and
// followed by handles when an actor moves (its owner restarted it elsewhere).

#include "actors/node/cluster_actors.hpp"

#include <caf/all.hpp>

#include "actors/user_actors/actor_host.hpp"
#include "actors/user_actors/remote_actor_record.hpp"
#include "framework/detail/wire_convert.hpp"

namespace swarm::actors {

void cluster_actors::register_remote_name(const std::string& peer,
                                          const wire_msg::actor_register& m) {
  wire_msg::actor_location out{m.request_id, false, m.actor_id, m.node, m.type_name, {}};
  detail::actor_spec spec;
  spec.type_name = m.type_name;
  spec.options.name = m.name;
  spec.options.max_task_retries = m.max_task_retries;
  auto rec = track(std::move(spec), m.node, m.actor_id);
  // A row of the same type whose actor is being restarted or followed gives way: this is
  // where its owner restarted it.
  if (auto old = link_.local->find_actor(m.name); old)
    if (auto* r = dynamic_cast<remote_actor_record*>(old->get());
        r && r->restarting() && r->spec().type_name == m.type_name) {
      resend_at(*r, m.node, m.actor_id);
      out.found = true;
      return link_.send_to(peer, out);
    }
  auto ok = link_.local->gcs().register_name(m.name, rec);
  if (!ok)
    out.error = ok.err().message;
  else if (!*ok)
    out.error = "actor name '" + m.name + "' is already taken";
  else
    out.found = true;
  link_.send_to(peer, out);
}

void cluster_actors::lookup_name(const std::string& peer,
                                 const wire_msg::actor_lookup& m) {
  // Without a name: an actor this node created, asked after by a handle elsewhere.
  if (m.name.empty())
    return caf::anon_send(link_.directory, lookup_atom::value, peer, m.request_id, m.node,
                          m.actor_id);
  auto out = location_here(m.name);
  out.request_id = m.request_id;
  link_.send_to(peer, out);
}

wire_msg::actor_location cluster_actors::location_here(const std::string& name) {
  wire_msg::actor_location out;
  auto rec = link_.local->find_actor(name);
  if (!rec) {
    out.error = "no live actor is named '" + name + "' in the cluster";
  } else {
    out.type_name = (*rec)->spec().type_name;
    out.max_task_retries = (*rec)->spec().options.max_task_retries;
    auto* r = dynamic_cast<remote_actor_record*>(rec->get());
    // Lost with its node and not placed anew yet: where it was, but not found (no
    // error), as its owner's directory answers: a handle sends no calls there.
    out.found = !(r && r->restarting());
    if (r) {
      out.node = r->remote_node();
      out.actor_id = r->id();
    } else {
      out.node = link_.self.name;
      if (auto id = link_.hosted.id_of(rec->get())) out.actor_id = *id;
    }
  }
  return out;
}

result<wire_msg::actor_location> cluster_actors::locate(const std::string& name) {
  if (link_.is_head()) return location_here(name);
  wire_msg::actor_lookup m;
  m.name = name;
  auto a = link_.request(link_.head_name(), m);
  if (!a) return a.err();
  auto* loc = std::get_if<wire_msg::actor_location>(&*a);
  if (!loc) return error{errc::invalid_argument, "unexpected answer to actor_lookup"};
  return *loc;
}

void cluster_actors::follow_actor(std::shared_ptr<remote_actor_record> rec,
                                  std::string lost_node, uint64_t lost_id,
                                  std::chrono::steady_clock::time_point until) {
  if (rec->dead() || !rec->restarting()) return;
  // Not waited for here: the head's agent may itself wait on this node (a restart).
  auto then = [this, rec, lost_node, lost_id,
               until](result<wire_msg::actor_location> at) {
    link_.post([this, rec, lost_node, lost_id, until, at] {
      followed(rec, lost_node, lost_id, until, at);
    });
  };
  // By its name at the head, or without one at its owner, which restarts it.
  wire_msg::actor_lookup ask{0, rec->spec().options.name, 0, {}};
  auto to = link_.head_name();
  if (ask.name.empty()) {
    ask.actor_id = lost_id;
    ask.node = lost_node;
    to = rec->spec().owner_node;
  } else if (link_.is_head()) {
    return then(location_here(ask.name));
  }
  link_.request_then(to, std::move(ask), [then](result<wire_msg::message> a) {
    if (!a) return then(a.err());
    auto* loc = std::get_if<wire_msg::actor_location>(&*a);
    if (!loc)
      return then(error{errc::invalid_argument, "unexpected answer to actor_lookup"});
    then(*loc);
  });
}

void cluster_actors::followed(const std::shared_ptr<remote_actor_record>& rec,
                              const std::string& lost_node, uint64_t lost_id,
                              std::chrono::steady_clock::time_point until,
                              const result<wire_msg::actor_location>& at) {
  if (rec->dead() || !rec->restarting()) return;
  bool moved = at && at->found && !(at->node == lost_node && at->actor_id == lost_id);
  // Still where it was, on a node the head finds alive: only the connection there was
  // lost (a node that began a new life closes its old ones), not the actor.
  bool stayed =
      at && at->found && !moved && lost_node != link_.self.name && link_.alive(lost_node);
  if (stayed && !link_.net->connected(lost_node)) {
    // No connection there now (closed, or refused: a partition the head does not see):
    // its calls go back there a little later, not at once in a loop of refused dials.
    link_.post_after(follow_every, [this, rec, node = at->node, id = at->actor_id] {
      if (rec->dead() || !rec->restarting()) return;
      resend_at(*rec, node, id);
    });
    return;
  }
  if (moved || stayed) {
    if (moved)
      link_.local->log().info(rec->label() + " is on node '" + at->node +
                              "' now: the calls that waited for it go there");
    resend_at(*rec, at->node, at->actor_id);
    return;
  }
  if (std::chrono::steady_clock::now() >= until) {
    auto why =
        rec->label() + " died with its node '" + lost_node +
        "' and was not seen restarted elsewhere within " +
        std::to_string(follow_timeout().count()) + " ms" +
        (at ? (at->found ? std::string{} : ": " + at->error) : ": " + at.err().message);
    for (auto& c : rec->abandon(why))
      c->result->set_error({errc::actor_died, why});
    return;
  }
  // Its owner has not restarted it yet (or the head has not heard): look again soon.
  link_.post_after(follow_every, [this, rec, lost_node, lost_id, until] {
    follow_actor(rec, lost_node, lost_id, until);
  });
}

detail::actor_record_ptr cluster_actors::follower(host_record& moved) {
  if (auto f = moved.forward()) return f;
  // By its name at the head, or without one at its owner, by the id it had here.
  detail::actor_spec spec;
  spec.type_name = moved.spec().type_name;
  spec.options.name = moved.spec().name();
  spec.options.max_task_retries = moved.spec().options.max_task_retries;
  spec.owner_node = moved.spec().owner_node;
  auto rec = track(std::move(spec), link_.self.name, moved.owner_id());
  auto set = moved.set_forward(rec);
  if (set == rec && rec->begin_follow()) restart_actor(rec);
  return set;
}

std::chrono::milliseconds cluster_actors::follow_timeout() const {
  return 4 * link_.cfg.node_timeout + std::chrono::milliseconds(10'000);
}

result<detail::actor_record_ptr> cluster_actors::find_actor(const std::string& name) {
  auto local = link_.local->find_actor(name);
  if (local || link_.is_head()) {
    if (!local) return local;
    if (auto* r = dynamic_cast<remote_actor_record*>(local->get()))
      return found_at(r->spec(), r->remote_node(), r->id(), r->restarting());
    return local;
  }
  auto loc = locate(name);
  if (!loc) return loc.err();
  bool restarting = !loc->found && loc->error.empty() && !loc->node.empty();
  if (!loc->found && !restarting) return error{errc::unregistered, loc->error};
  if (loc->node == link_.self.name && !restarting) {
    if (auto rec = link_.hosted.find(loc->actor_id)) return rec;
    return error{errc::unregistered, "actor '" + name + "' is gone"};
  }
  detail::actor_spec spec;
  spec.type_name = loc->type_name;
  spec.options.name = name;
  spec.options.max_task_retries = loc->max_task_retries;
  return found_at(std::move(spec), loc->node, loc->actor_id, restarting);
}

detail::actor_record_ptr cluster_actors::found_at(detail::actor_spec spec,
                                                  const std::string& node, uint64_t id,
                                                  bool restarting) {
  auto rec = track(std::move(spec), node, id);
  if (restarting && rec->begin_follow()) restart_actor(rec);
  return rec;
}

detail::actor_address cluster_actors::address_of(const detail::actor_record_ptr& target) {
  auto& spec = target->spec();
  if (auto* r = dynamic_cast<remote_actor_record*>(target.get()))
    return {r->remote_node(),
            r->id(),
            spec.type_name,
            spec.name(),
            spec.options.max_task_retries,
            r->owned() ? link_.self.name : spec.owner_node};
  auto id = link_.hosted.share(target, [this] { return next_actor_++; });
  return {link_.self.name,
          id,
          spec.type_name,
          spec.name(),
          spec.options.max_task_retries,
          spec.owner_node.empty() ? link_.self.name : spec.owner_node};
}

result<detail::actor_record_ptr>
cluster_actors::actor_at(const detail::actor_address& addr) {
  if (addr.node == link_.self.name) {
    if (auto rec = link_.hosted.find(addr.id)) return rec;
    return error{errc::actor_died, "actor " + std::to_string(addr.id) + " of type '" +
                                       addr.type_name + "' on node '" + addr.node +
                                       "' is gone (killed)"};
  }
  // Calls through it go straight to the actor's node. One its owner restarts elsewhere
  // is followed by its name, as from `find_actor`, or without one through its owner.
  detail::actor_spec spec;
  spec.type_name = addr.type_name;
  spec.options.name = addr.name;
  spec.options.max_task_retries = addr.max_task_retries;
  if (addr.owner != link_.self.name) spec.owner_node = addr.owner;
  return detail::actor_record_ptr{track(std::move(spec), addr.node, addr.id)};
}

} // namespace swarm::actors
