#include "actors/user_actors/actor_directory.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "actors/user_actors/actor_host.hpp"
#include "framework/detail/wire_convert.hpp"

namespace swarm::actors {

namespace {

struct actor_directory_state {
  actor_directory_config cfg;
  std::vector<std::weak_ptr<remote_actor_record>> records;
  size_t prune_at = 64;

  // Pruned when it doubled, so tracking stays amortized O(1) with many live actors.
  void track(std::shared_ptr<remote_actor_record> r) {
    if (records.size() >= prune_at) {
      records.erase(std::remove_if(records.begin(), records.end(),
                                   [](auto& w) { return w.expired(); }),
                    records.end());
      prune_at = std::max<size_t>(64, 2 * records.size());
    }
    records.push_back(std::move(r));
  }

  void lost(const std::string& peer, const std::string& why) {
    using recovery = remote_actor_record::recovery;
    for (auto& w : records) {
      auto r = w.lock();
      if (!r || r->dead() || r->remote_node() != peer) continue;
      // A call that could not reach it may have begun its restart or follow already, on
      // its own thread: that goes on.
      switch (recover(cfg.log, *r, peer, 0, why)) {
      case recovery::moving:
      case recovery::restarting:
      case recovery::following:
        cfg.restart(std::move(r));
        break;
      case recovery::under_way:
      case recovery::elsewhere:
        break;
      case recovery::none:
        r->mark_dead("actor of type '" + r->spec().type_name + "' died with its node '" +
                     peer + "': " + why +
                     (r->owned()
                          ? "; restarts used up (max_restarts = " +
                                std::to_string(r->spec().options.max_restarts) + ")"
                          : ""));
      }
    }
    cfg.then_lost(peer, why);
  }

  // The record of the actor this node created that is, or was before a restart, `id`
  // on `node`; null when none is.
  std::shared_ptr<remote_actor_record> created_at(const std::string& node,
                                                  uint64_t id) const {
    for (auto& w : records)
      if (auto r = w.lock(); r && r->owned() && r->was_at(node, id)) return r;
    return nullptr;
  }

  // Kept only from the instance the record shows, and not once its restart took the
  // state: an earlier instance's (its node found dead, the actor restarted elsewhere) is
  // refused, and told so when it asks. A restart begun meanwhile takes it: the restart
  // comes through here, after the states that arrived before it.
  // States are numbered by their instance: one older than the state kept (sent again,
  // or overtaken on another connection) is not kept, and is taken all the same.
  void checkpoint(const std::string& peer, wire_msg::actor_checkpoint& m) {
    auto r = created_at(peer, m.actor_id);
    bool taken = r && r->keep_state(peer, m.actor_id, m.seq, std::move(m.state));
    if (m.answer && cfg.send)
      cfg.send(peer, wire_msg::actor_checkpoint_taken{m.actor_id, m.seq, taken});
  }

  // The answer to a call this node made through a handle other than the creator's
  // carries the state with its effect: the record that restarts the actor keeps it
  // before the answer counts. Refused (the instance that ran the call was replaced, its
  // state taken by a restart), the answer says so: the call runs again where the actor
  // is. No record, no restart to come: the answer counts as it is.
  void vouch(const std::string& peer, wire_msg::task_result& m) {
    if (auto r = created_at(peer, m.actor_id);
        r && !r->keep_state(peer, m.actor_id, m.state_seq, std::move(m.state)))
      m.outcome = detail::to_wire(r->refused_answer(peer));
    m.state_seq = 0;
    m.state.clear();
    if (cfg.vouched) cfg.vouched(peer, std::move(m));
  }

  // `peer` stops: the actors this node created there move when it is lost.
  void moving(const std::string& peer, const std::vector<uint64_t>& ids) {
    for (auto& w : records)
      if (auto r = w.lock(); r && !r->dead())
        for (auto id : ids)
          if (r->mark_moving(peer, id)) break;
  }

  // Where the actor this node created, that was `id` on `node`, lives now.
  wire_msg::actor_location where_now(const std::string& node, uint64_t id) const {
    wire_msg::actor_location out;
    for (auto& w : records) {
      auto r = w.lock();
      if (!r || !r->owned() || !r->was_at(node, id)) continue;
      out.type_name = r->spec().type_name;
      out.max_task_retries = r->spec().options.max_task_retries;
      if (r->dead())
        out.error = r->death_reason();
      else if (!r->restarting()) {
        // Where it is, the place the asker lost it included: only a connection there may
        // have closed (the asker's new life closes its old ones); the asker decides.
        out.found = true;
        out.node = r->remote_node();
        out.actor_id = r->id();
      }
      return out;
    }
    out.error = "node '" + cfg.node + "' created no actor that was " +
                std::to_string(id) + " on node '" + node + "', or it is gone";
    return out;
  }

  // The owner's answer goes to the host of the actor, if it is still here.
  void taken(const wire_msg::actor_checkpoint_taken& m) const {
    if (auto rec = cfg.hosted->find(m.actor_id))
      if (auto* h = dynamic_cast<host_record*>(rec.get()))
        if (auto host = h->host())
          caf::anon_send(host, taken_atom::value, m.seq, m.taken);
  }
};

using actor_directory_self =
    actor_directory_actor::stateful_pointer<actor_directory_state>;

actor_directory_actor::behavior_type actor_directory(actor_directory_self self,
                                                     actor_directory_config cfg) {
  self->state.cfg = std::move(cfg);
  return {
      [=](track_atom, std::shared_ptr<remote_actor_record>& r) {
        self->state.track(std::move(r));
      },
      [=](lost_atom, const std::string& peer, const std::string& why) {
        self->state.lost(peer, why);
      },
      [=](checkpoint_atom, const std::string& peer, wire_msg::actor_checkpoint& m) {
        self->state.checkpoint(peer, m);
      },
      [=](checkpoint_atom, const std::string& peer, wire_msg::task_result& m) {
        self->state.vouch(peer, m);
      },
      [=](moving_atom, const std::string& peer, const std::vector<uint64_t>& ids) {
        self->state.moving(peer, ids);
      },
      [=](restart_atom, std::shared_ptr<remote_actor_record>& r) {
        self->state.cfg.restart(std::move(r));
      },
      [=](lookup_atom, const std::string& peer, uint64_t request, const std::string& node,
          uint64_t id) {
        auto out = self->state.where_now(node, id);
        out.request_id = request;
        if (self->state.cfg.send) self->state.cfg.send(peer, std::move(out));
      },
      [=](taken_atom, const wire_msg::actor_checkpoint_taken& m) {
        self->state.taken(m);
      },
      [=](host_atom, uint64_t id, detail::actor_record_ptr& rec) {
        self->state.cfg.hosted->put(id, std::move(rec));
        return true;
      },
      [=](unhost_atom, uint64_t id) {
        if (auto rec = self->state.cfg.hosted->erase(id))
          self->state.cfg.kill(std::move(rec));
      },
      [=](unhost_atom, const detail::actor_record_ptr& rec) {
        self->state.cfg.hosted->erase(rec.get());
      },
      [=](fence_atom, const std::string& why) {
        auto& st = self->state;
        auto stale = st.cfg.hosted->move_out_if(
            [](const detail::actor_record& r) { return !r.spec().owner_node.empty(); });
        for (auto& rec : stale) {
          auto stopped = "actor of type '" + rec->spec().type_name + "' on node '" +
                         st.cfg.node + "' was stopped: " + why + "; node '" +
                         rec->spec().owner_node + "' restarted it elsewhere";
          rec->mark_dead(stopped);
          // Its host redirects the calls it holds; the kill behind changes nothing more.
          if (auto* h = dynamic_cast<host_record*>(rec.get())) {
            h->mark_moved();
            if (auto host = h->host()) caf::anon_send(host, fence_atom::value, stopped);
          }
          st.cfg.kill(rec);
        }
        return static_cast<uint64_t>(stale.size());
      },
      [=](count_atom) {
        auto& rs = self->state.records;
        return static_cast<uint64_t>(
            std::count_if(rs.begin(), rs.end(), [](auto& w) { return !w.expired(); }));
      },
  };
}

} // namespace

remote_actor_record::recovery recover(const node_log& log, remote_actor_record& r,
                                      const std::string& peer, uint64_t id,
                                      const std::string& why) {
  using recovery = remote_actor_record::recovery;
  uint32_t used = 0;
  auto began = r.recover(peer, id, &used);
  auto max = std::to_string(r.spec().options.max_restarts);
  if (began == recovery::moving)
    log.info("moving actor '" + r.spec().type_name + "' off node '" + peer +
             "', which stopped: the move uses none of its restarts (max_restarts = " +
             max + ")");
  else if (began == recovery::restarting)
    log.warn("restarting actor '" + r.spec().type_name + "' (restart " +
             std::to_string(used + 1) + " of " + max + "): node '" + peer +
             "' is lost: " + why);
  else if (began == recovery::following)
    log.info(r.label() + " was lost with node '" + peer +
             "': its calls here wait until its owner restarts it");
  return began;
}

actor_directory_actor spawn_actor_directory(caf::actor_system& sys,
                                            actor_directory_config cfg, bool detached) {
  if (detached) return sys.spawn<caf::detached>(actor_directory, std::move(cfg));
  return sys.spawn(actor_directory, std::move(cfg));
}

void add_directory_routes(wire_routes& routes, const actor_directory_actor& directory) {
  routes.mailbox<wire_msg::actor_checkpoint>(
      directory, [](const std::string& peer, wire_msg::actor_checkpoint&& m) {
        return std::make_tuple(checkpoint_atom::value, peer, std::move(m));
      });
  routes.mailbox<wire_msg::actors_moving>(
      directory, [](const std::string& peer, wire_msg::actors_moving&& m) {
        return std::make_tuple(moving_atom::value, peer, std::move(m.actor_ids));
      });
  routes.mailbox<wire_msg::actor_checkpoint_taken>(
      directory, [](const std::string&, wire_msg::actor_checkpoint_taken&& m) {
        return std::make_tuple(taken_atom::value, std::move(m));
      });
  routes.mailbox<wire_msg::actor_kill>(
      directory, [](const std::string&, wire_msg::actor_kill&& m) {
        return std::make_tuple(unhost_atom::value, m.actor_id);
      });
}

} // namespace swarm::actors
