#include "actors/objects/object_manager.hpp"
#include "actors/objects/object_manager_state.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <tuple>

#include "framework/detail/task_spec.hpp"

namespace swarm::actors {

std::string object_manager_state::id_of(const object_key& k) const {
  return object_id{k.first, k.second}.to_string();
}

error object_manager_state::lost_error(const object_key& k, const std::string& holder,
                                       const std::string& why) const {
  auto owner = owner_node_of(k, cfg.nodes, cfg.joined);
  if (owner == holder)
    return {errc::owner_died, "object " + id_of(k) + "'s owner, node '" + owner +
                                  "', died with its value: " + why};
  return {errc::object_lost,
          "node '" + holder + "', which held object " + id_of(k) + ", died: " + why};
}

void object_manager_state::hold(hold_request& r) {
  if (!r.exported) {
    held[r.key] = {std::move(r.value), std::move(r.layout), 0, std::move(r.keep)};
    return;
  }
  auto& h = held[r.key];
  if (!h.layout) h = {std::move(r.value), std::move(r.layout), 0, std::move(r.keep)};
  ++h.exports;
}

void object_manager_state::release(const std::vector<object_key>& keys) {
  for (auto& k : keys) {
    auto i = held.find(k);
    if (i != held.end() && i->second.exports > 0 && --i->second.exports == 0 &&
        !i->second.replicated)
      held.erase(i);
  }
}

void object_manager_state::replicate(replicate_request& r) {
  auto k = r.hold.key;
  hold(r.hold);
  auto& h = held[k];
  h.replicated = true;
  replicas->start(k, h.layout->size(), r.copies, std::move(r.done), std::move(r.avoid));
}

void object_manager_state::drop_copies(const object_key& k) {
  replicas->drop(k);
  auto i = copies.find(k);
  if (i == copies.end()) return;
  for (auto& peer : i->second)
    cfg.send(peer, wire_msg::object_free{{k.first, k.second}});
  copies.erase(i);
}

void object_manager_state::keep_replica(const std::string& peer,
                                        const wire_msg::object_replicate& m) {
  object_key k{m.ref.id.owner, m.ref.id.seq};
  auto answer = [this, peer, id = m.ref.id](std::string why) {
    cfg.send(peer, wire_msg::object_replicated{id, std::move(why)});
  };
  if (held.count(k)) return answer("");
  fetch_request r{m.ref, nullptr, [this, k, answer](result<detail::boxed_value> v) {
                    if (!v) return answer(v.err().message);
                    auto layout = lay_out(v->ptr, v->type, cfg.values);
                    auto& h = held[k];
                    if (!h.layout)
                      h = {*v,
                           std::shared_ptr<const bulk_layout>{layout, &layout->layout}, 0,
                           nullptr};
                    answer("");
                  }};
  fetch(r);
}

void object_manager_state::primary_here(
    std::map<object_key, located_object>::iterator l) {
  if (auto s = l->second.slot.lock()) s->set_location(std::nullopt);
  cfg.publish(wire_msg::object_location{
      {l->first.first, l->first.second}, l->second.node, 0, false});
  located.erase(l);
}

void object_manager_state::hand_over_held() {
  std::map<std::string, std::vector<object_key>> by_owner;
  for (auto& [k, h] : held)
    if (h.exports == 0)
      if (auto owner = owner_node_of(k, cfg.nodes, cfg.joined);
          !owner.empty() && owner != cfg.node && (!cfg.alive || cfg.alive(owner)))
        by_owner[owner].push_back(k);
  hand_over.start(by_owner);
  for (auto& [owner, keys] : by_owner) {
    wire_msg::objects_hand_over m;
    for (auto& k : keys)
      m.ids.push_back({k.first, k.second});
    cfg.send(owner, std::move(m));
  }
}

void object_manager_state::take_over(const std::string& peer,
                                     const wire_msg::objects_hand_over& m) {
  wire_msg::objects_taken now;
  for (auto& id : m.ids) {
    object_key k{id.owner, id.seq};
    auto l = located.find(k);
    bool there = l != located.end() && l->second.node == peer;
    if (there && pulls.count(k)) {
      hand_over.await_pull(k, peer);
      continue;
    }
    if (there) primary_here(l);
    now.ids.push_back(id);
  }
  if (!now.ids.empty()) cfg.send(peer, std::move(now));
}

void object_manager_state::answer_hand_over() {
  if (handing && hand_over.done()) {
    handing->deliver(hand_over.handed());
    handing.reset();
  }
}

void object_manager_state::forget(const object_key& k) {
  copies_here->drop_kept(k);
  auto i = located.find(k);
  if (i == located.end()) return;
  auto holder = i->second.node;
  located.erase(i);
  cfg.publish(wire_msg::object_location{{k.first, k.second}, holder, 0, false});
}

void object_manager_state::lost(const std::string& peer, const std::string& why) {
  replicas->lost(peer);
  lending->lost(peer);
  for (auto i = copies.begin(); i != copies.end();) {
    i->second.erase(peer);
    i = i->second.empty() ? copies.erase(i) : std::next(i);
  }
  for (auto i = pulls.begin(); i != pulls.end();) {
    auto next = std::next(i);
    if (i->second.sharing == peer) i->second.sharing.clear();
    auto& parked = i->second.parked;
    parked.erase(std::remove_if(parked.begin(), parked.end(),
                                [&](auto& x) { return x.first == peer; }),
                 parked.end());
    if (!drop_source(i->first, i->second, peer))
      finish(i, lost_error(i->first, peer, why));
    else
      request_chunks(i->first, i->second);
    i = next;
  }
  // Results owned here that stayed there: this node's own copy is the primary now
  // (or, while it was still being pulled, the pull failed and the task is remade).
  for (auto i = located.begin(); i != located.end();) {
    auto next = std::next(i);
    if (i->second.node == peer) primary_here(i);
    i = next;
  }
  hand_over.lost(peer);
  answer_hand_over();
  // Results made here for an owner on that node: nobody will read or free them.
  for (auto i = held.begin(); i != held.end();) {
    if (i->second.exports == 0 && owner_node_of(i->first, cfg.nodes, cfg.joined) == peer)
      i = held.erase(i);
    else
      ++i;
  }
}

namespace {

using object_manager_self = object_manager_actor::stateful_pointer<object_manager_state>;

object_manager_actor::behavior_type object_manager(object_manager_self self,
                                                   object_manager_config cfg) {
  self->state.cfg = std::move(cfg);
  self->state.replicas = std::make_unique<replication_table>(replication_table::config{
      self->state.cfg.node, self->state.cfg.pick, self->state.cfg.send});
  self->state.copies_here = std::make_unique<pulled_copies>(
      self->state.cfg.keep_pulled_bytes, self->state.cfg.cache);
  self->state.lending =
      std::make_unique<device_lending>(self->state.cfg.node, self->state.cfg.devices);
  self->state.self = caf::actor_cast<caf::weak_actor_ptr>(self);
  // Stopping fails every pull in flight: its readers learn why instead of waiting.
  self->set_exit_handler([=](const caf::exit_msg& x) {
    auto& st = self->state;
    while (!st.pulls.empty()) {
      auto i = st.pulls.begin();
      std::string from;
      for (auto& s : i->second.sources)
        from += (from.empty() ? "node '" : ", '") + s.node + "'";
      st.finish(i, error{errc::runtime_stopped,
                         "node '" + st.cfg.node + "' stopped while pulling " +
                             st.id_of(i->first) + " from " + from});
    }
    self->quit(x.reason);
  });
  return {
      [=](hold_atom, hold_request& r) { self->state.hold(r); },
      [=](release_atom, const std::vector<object_key>& keys) {
        self->state.release(keys);
      },
      [=](free_atom, const object_key& k) {
        auto& st = self->state;
        st.held.erase(k);
        st.copies_here->forget(k);
        if (auto i = st.pulls.find(k); i != st.pulls.end()) i->second.freed = true;
        st.drop_copies(k);
      },
      [=](freed_atom, const object_key& k) {
        auto& st = self->state;
        if (auto h = st.held.find(k); h != st.held.end() && h->second.replicated) {
          if (h->second.exports == 0)
            st.held.erase(h);
          else
            h->second.replicated = false;
        }
        st.drop_copies(k);
      },
      [=](replicate_atom, replicate_request& r) { self->state.replicate(r); },
      [=](replica_atom, const std::string& peer, const wire_msg::object_replicate& m) {
        self->state.keep_replica(peer, m);
      },
      [=](replicated_atom, const std::string& peer,
          const wire_msg::object_replicated& m) {
        auto& st = self->state;
        // A replica not made says so somewhere: the put itself succeeded.
        if (!m.error.empty() && st.cfg.warn)
          st.cfg.warn("node '" + peer + "' did not keep a replica of object " +
                      st.id_of({m.id.owner, m.id.seq}) + ": " + m.error +
                      " (another node is asked, if one is left)");
        st.replicas->answered(peer, {m.id.owner, m.id.seq}, m.error);
      },
      [=](pull_atom, const std::string& peer, const wire_msg::object_pull& m) {
        self->state.serve(peer, m);
      },
      [=](chunk_atom, const std::string& peer, wire_msg::object_chunk& m) {
        self->state.on_chunk(peer, m);
      },
      [=](fetch_atom, fetch_request& r) { self->state.fetch(r); },
      [=](locate_atom, located_object& o) {
        auto k = o.key;
        self->state.located[k] = std::move(o);
      },
      [=](forget_atom, const object_key& k) { self->state.forget(k); },
      [=](lost_atom, const std::string& peer, const std::string& why) {
        self->state.lost(peer, why);
      },
      [=](hand_over_atom) -> caf::result<uint64_t> {
        auto& st = self->state;
        st.hand_over_held();
        if (st.hand_over.done()) return st.hand_over.handed();
        st.handing = self->make_response_promise<uint64_t>();
        return *st.handing;
      },
      [=](hand_over_atom, const std::string& peer, const wire_msg::objects_hand_over& m) {
        self->state.take_over(peer, m);
      },
      [=](handed_atom, const std::string& peer, const wire_msg::objects_taken& m) {
        auto& st = self->state;
        std::vector<object_key> keys;
        for (auto& id : m.ids)
          keys.emplace_back(id.owner, id.seq);
        st.hand_over.taken(peer, keys);
        st.answer_hand_over();
      },
      [=](share_atom, const std::string& peer, const wire_msg::device_share& m) {
        self->state.on_share(peer, m);
      },
      [=](unmapped_atom, const std::string& peer, const wire_msg::device_released& m) {
        self->state.lending->released(peer, {m.id.owner, m.id.seq});
      },
      [=](unmapped_atom, const std::string& peer, const object_key& k) {
        self->state.cfg.send(peer, wire_msg::device_released{{k.first, k.second}});
      },
      [=](count_atom) {
        return static_cast<uint64_t>(self->state.copies_here->remembered_count());
      },
      [=](kept_atom) { return self->state.copies_here->kept_bytes(); },
      [=](transfers_atom) {
        auto& t = self->state.transfers;
        return std::vector<transfer_event>(t.begin(), t.end());
      },
  };
}

} // namespace

std::string owner_node_of(const object_key& k, const std::vector<std::string>& nodes,
                          const joined_names& joined) {
  auto index = k.first >> owner_index_shift;
  if (index == 0) return {};
  if (index > nodes.size()) return joined ? joined(index) : std::string{};
  return nodes[index - 1];
}

object_manager_actor spawn_object_manager(caf::actor_system& sys,
                                          object_manager_config cfg, bool detached) {
  if (detached) return sys.spawn<caf::detached>(object_manager, std::move(cfg));
  return sys.spawn(object_manager, std::move(cfg));
}

} // namespace swarm::actors
