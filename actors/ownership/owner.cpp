#include "actors/ownership/owner.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <variant>

#include "actors/objects/object_manager.hpp"
#include "actors/user_actors/actor_directory.hpp"
#include "actors/user_actors/remote_actor_record.hpp"
#include "framework/detail/wire_convert.hpp"

namespace swarm::actors {

namespace {

using detail::decode;
using detail::from_wire;
using detail::key_of;

struct owner_state {
  owner_config cfg;
  std::map<object_key, pending_call> children;
  // Children whose node has not joined yet: the message for it, and until when it waits.
  struct waiting_child {
    std::string node;
    wire_msg::message message;
    std::chrono::steady_clock::time_point until;
  };
  std::map<object_key, waiting_child> waiting;
  // Tasks run on several nodes whose result came: the nodes whose copies may still
  // answer (a result they stored is freed there).
  std::map<object_key, std::set<std::string>> losers;
  // Node losses the owner restarted its children after.
  restart_window window{restart_intensity{}};
  // When each node was last lost, and which life of it (its incarnation in this node's
  // view then; 0: not known), until it answers again: news that the head placed a child
  // there may come after the loss (another connection), and this node's view may not
  // show the loss yet (the head judges).
  struct loss {
    std::chrono::steady_clock::time_point at;
    uint64_t incarnation = 0;
  };
  std::map<std::string, loss> lost_at;
  // The borrower protocol (made once the owner runs: it tells the owner itself).
  std::unique_ptr<borrow_table> borrows;
};

using owner_self = owner_actor::stateful_pointer<owner_state>;

void log(owner_state& st, const std::string& line) {
  st.cfg.log.info(line);
}

std::chrono::steady_clock::time_point now(const owner_state& st) {
  return st.cfg.now ? st.cfg.now() : std::chrono::steady_clock::now();
}

// Runs `t` again while its retries last; false when they are used up.
bool rerun(owner_state& st, const detail::task_ptr& t, const std::string& why) {
  if (t->attempts >= t->options.max_retries) return false;
  ++t->attempts;
  log(st, "running '" + t->name + "' again (attempt " + std::to_string(t->attempts + 1) +
              " of " + std::to_string(t->options.max_retries + 1) + "): " + why);
  st.cfg.resubmit(t);
  return true;
}

// A copy of a task run on several nodes answered after another one did: a result it
// stored there is freed.
void drop_late_copy(owner_state& st, const object_key& k, const std::string& from,
                    const wire_msg::task_result& m) {
  auto l = st.losers.find(k);
  if (l == st.losers.end() || l->second.erase(from) == 0) return;
  if (std::holds_alternative<wire_msg::stored_at>(m.outcome))
    st.cfg.send(from, wire_msg::object_free{m.result});
  if (l->second.empty()) st.losers.erase(l);
}

// The nodes running copies of `c` but `node`.
std::vector<std::string> copies_but(const pending_call& c, const std::string& node) {
  std::vector<std::string> out;
  if (c.node != node) out.push_back(c.node);
  for (auto& n : c.copies)
    if (n != node) out.push_back(n);
  return out;
}

// A copy of a task run on several nodes answered from `from`, or its node was lost
// (`outcome` null): true when the others go on (an error, or a loss, while some run).
// Otherwise the answer wins: the others are cancelled and their late answers dropped.
bool copy_answered(owner_state& st, const object_key& k, pending_call& c,
                   const std::string& from, const wire_msg::task_result* outcome) {
  auto others = copies_but(c, from);
  bool failed =
      !outcome || std::holds_alternative<wire_msg::error_value>(outcome->outcome);
  if (failed && !others.empty()) {
    log(st, "a copy of '" + c.task->name + "' on node '" + from + "' " +
                (outcome ? "failed" : "was lost") + "; " + std::to_string(others.size()) +
                " copy(ies) still run");
    c.node = others.front();
    c.copies.assign(others.begin() + 1, others.end());
    return true;
  }
  for (auto& n : others)
    st.cfg.send(n, wire_msg::task_cancel{{k.first, k.second}});
  if (!others.empty()) st.losers[k].insert(others.begin(), others.end());
  c.node = from;
  c.copies.clear();
  return false;
}

// Fills `slot` with the value `v` (a `type`) came inline as, or with why it did not
// decode.
void set_decoded(owner_state& st, detail::object_slot& slot, const wire_msg::value& v,
                 const detail::type_descriptor* type) {
  auto d = decode(v, type, st.cfg.values);
  if (d)
    slot.set_value(std::move(*d));
  else
    slot.set_error(d.err());
}

// Whether `m` comes from an earlier life of `from` than this node's view shows: the
// head found that life dead (a frozen or cut-off node, back as a new life), so the
// tasks it ran were lost with it and run again.
bool from_earlier_life(const owner_state& st, const std::string& from,
                       const wire_msg::task_result& m) {
  if (m.life == 0 || !st.cfg.incarnation) return false;
  auto now = st.cfg.incarnation(from);
  return now != 0 && m.life < now;
}

// A call its actor's node did not answer (lost with it) goes to the actor restarted:
// held while the restart is under way, or sent where it was restarted before the loss
// reached the owner. False when neither.
bool to_restarted(owner_state& st, pending_call& p) {
  if (p.actor->hold(p.task, true)) return true;
  if (p.actor->dead()) return false;
  if (p.actor->remote_node() == p.node &&
      (p.actor_id == 0 || p.actor->id() == p.actor_id))
    return false;
  st.cfg.call(p.actor, std::move(p.task));
  return true;
}

// A call lost with the instance it was sent to: it waits for the actor's restart (its
// creator's) or follow (another handle's), begun here unless this node's directory,
// hearing of the same loss on its own thread, began it already; or it goes where the
// actor lives since. False when nothing brings the actor back.
bool follow_actor(owner_state& st, pending_call& p, const std::string& why) {
  using recovery = remote_actor_record::recovery;
  if (p.actor->dead()) return false;
  switch (recover(st.cfg.log, *p.actor, p.node, p.actor_id, why)) {
  case recovery::moving:
  case recovery::restarting:
  case recovery::following:
    p.actor->hold(p.task, true);
    st.cfg.restart(p.actor);
    return true;
  case recovery::under_way:
  case recovery::elsewhere:
    return to_restarted(st, p);
  case recovery::none:
    break;
  }
  return false;
}

void on_result(owner_state& st, const std::string& from, wire_msg::task_result& m) {
  auto k = key_of(from_wire(m.result));
  auto i = st.children.find(k);
  // A task's answer from a life found dead does not count: the task runs again (or
  // did), and that run answers.
  if (i != st.children.end() && !i->second.actor && from_earlier_life(st, from, m)) {
    if (std::holds_alternative<wire_msg::stored_at>(m.outcome))
      st.cfg.send(from, wire_msg::object_free{m.result});
    return;
  }
  st.lost_at.erase(from); // it answers: back, if it was lost
  // Answered already, or cancelled.
  if (i == st.children.end()) return drop_late_copy(st, k, from, m);
  if (!i->second.copies.empty() && copy_answered(st, k, i->second, from, &m)) return;
  // An actor call answers from the instance it was sent to. Another's answer (another
  // node's, or an earlier instance's on the same node) comes from an instance given up
  // for dead (a frozen node, back again) whose state the restarted actor does not have:
  // the call the restarted one runs answers instead. A task's answer is good from
  // wherever it ran.
  if (auto& c = i->second; c.actor && !from.empty() &&
                           (from != c.node || (m.actor_id != 0 && c.actor_id != 0 &&
                                               m.actor_id != c.actor_id)))
    return;
  // The answer to a call from this node carries the state saved with its effect: it
  // counts once the record that restarts the actor keeps that state, so no restart
  // resumes from a state without it. The creator's record keeps it here; another
  // handle's answer goes through the directory, which finds the creator's record.
  if (auto& c = i->second; c.actor && m.state_seq != 0) {
    if (!c.actor->owned()) {
      if (st.cfg.vouch) return st.cfg.vouch(from, std::move(m));
    } else if (!c.actor->keep_state(from, m.actor_id, m.state_seq, std::move(m.state))) {
      m.outcome = detail::to_wire(c.actor->refused_answer(from));
    }
  }
  auto p = std::move(i->second);
  st.children.erase(i);
  if (!p.exported.empty()) st.cfg.release(std::move(p.exported));
  auto& slot = p.task->result;
  if (auto* e = std::get_if<wire_msg::error_value>(&m.outcome)) {
    auto err = from_wire(*e);
    // A call that never reached its actor's node (so it did not run): the actor is lost
    // with that node, as when the connection closes, which may be reported only later.
    // The call waits for the actor's restart, or goes to where it was restarted.
    if (err.code == errc::node_unreachable && p.actor) {
      if (follow_actor(st, p, err.message)) return;
    }
    // A task sent to a node that died on the way, or stopped before running it, or whose
    // input was lost with one, runs again elsewhere; its inputs are shipped from here.
    bool movable = p.task->method.empty() && p.task->options.node.empty();
    bool again = err.code == errc::object_lost ||
                 (movable && (err.code == errc::node_unreachable ||
                              err.code == errc::runtime_stopped));
    if (!again || !rerun(st, p.task, err.message)) slot->set_error(std::move(err));
  } else if (auto* v = std::get_if<wire_msg::value>(&m.outcome)) {
    set_decoded(st, *slot, *v, p.task->result_type);
  } else {
    st.cfg.pull(std::move(p.task), std::get<wire_msg::stored_at>(m.outcome));
  }
}

// The head placed a child this node sent it on `m.node`: the child is there now, so
// that node's loss runs it again. A loss seen before this news runs it again now.
void on_placed(owner_state& st, const std::string& from, wire_msg::task_placed& m) {
  auto k = key_of(from_wire(m.result));
  auto i = st.children.find(k);
  if (i == st.children.end() || i->second.actor || i->second.node != from) return;
  i->second.node = m.node;
  // Placed on the life of the node this one saw lost, or (which life not known) soon
  // after that loss: it runs again now. Not when this node's view shows a later life
  // alive, the one the head placed it on: that life's loss would run it again.
  auto lost = st.lost_at.find(m.node);
  bool on_lost_life = false;
  if (lost != st.lost_at.end()) {
    auto was = lost->second.incarnation;
    bool later_alive = m.incarnation > was && was != 0 && st.cfg.alive &&
                       st.cfg.alive(m.node) && st.cfg.incarnation &&
                       st.cfg.incarnation(m.node) >= m.incarnation;
    on_lost_life = !later_alive && ((was != 0 && m.incarnation == was) ||
                                    now(st) - lost->second.at < std::chrono::seconds(30));
  }
  // A node this one's table does not list yet joined a moment ago: the head, which
  // placed the child there, saw it alive.
  bool unseen = st.cfg.joined && !st.cfg.joined(m.node);
  bool seen_dead = st.cfg.alive && !unseen && !st.cfg.alive(m.node);
  if (!on_lost_life && !seen_dead) return;
  auto p = std::move(i->second);
  st.children.erase(i);
  if (!p.exported.empty()) st.cfg.release(std::move(p.exported));
  auto why = "node '" + m.node + "', where the head placed it, was lost";
  if (p.task->options.node.empty() && rerun(st, p.task, why)) return;
  p.task->result->set_error({errc::worker_died, "'" + p.task->name + "' failed: " + why +
                                                    " (after " +
                                                    std::to_string(p.task->attempts + 1) +
                                                    " attempt(s))"});
}

void on_stream_item(owner_state& st, const std::string& from, wire_msg::stream_item& m) {
  auto k = key_of(from_wire(m.result));
  auto* stored = std::get_if<wire_msg::stored_at>(&m.item.outcome);
  auto drop = [&] {
    if (stored) st.cfg.send(stored->node, wire_msg::object_free{m.item.result});
  };
  auto i = st.children.find(k);
  // Its reader is gone (the task was cancelled, or ended).
  if (i == st.children.end() || !i->second.task->reader) return drop();
  auto& c = i->second;
  // A call answers from its actor's node only (see on_result).
  if (c.actor && from != c.node) return drop();
  c.streaming_on = from;
  auto& reader = *c.task->reader;
  if (!reader.expects(m.seq)) {
    drop();
    return st.cfg.send(from, wire_msg::stream_ack{m.result, reader.taken()});
  }
  auto slot = std::make_shared<detail::object_slot>(from_wire(m.item.result));
  if (auto* v = std::get_if<wire_msg::value>(&m.item.outcome)) {
    set_decoded(st, *slot, *v, reader.item_type());
  } else if (auto* e = std::get_if<wire_msg::error_value>(&m.item.outcome)) {
    slot->set_error(from_wire(*e));
  } else {
    auto& o = c.task->options;
    st.cfg.pull_item(slot, reader.item_type(), *stored,
                     pull_weight(o.priority, o.job_share));
  }
  reader.deliver(m.seq, std::move(slot));
}

void on_lost(owner_self self, const std::string& peer, const std::string& why) {
  auto& st = self->state;
  st.lost_at[peer] = {now(st), st.cfg.incarnation ? st.cfg.incarnation(peer) : 0};
  st.borrows->lost(peer, why);
  for (auto l = st.losers.begin(); l != st.losers.end();)
    l = l->second.erase(peer) > 0 && l->second.empty() ? st.losers.erase(l)
                                                       : std::next(l);
  std::vector<pending_call> lost;
  for (auto i = st.children.begin(); i != st.children.end();) {
    auto& c = i->second;
    bool there = c.node == peer ||
                 std::find(c.copies.begin(), c.copies.end(), peer) != c.copies.end();
    // A copy of a task run on several nodes: the others go on, nothing runs again.
    if (there && !c.copies.empty() && copy_answered(st, i->first, c, peer, nullptr)) {
      ++i;
      continue;
    }
    if (i->second.node == peer) {
      lost.push_back(std::move(i->second));
      i = st.children.erase(i);
    } else {
      ++i;
    }
  }
  if (lost.empty()) return;
  // One node loss is one restart of the children that were there; past the intensity
  // the owner gives up on them (escalation).
  bool restart = st.window.allow(now(st));
  auto gave_up =
      restart
          ? std::string{}
          : "; the owner on node '" + st.cfg.node + "' gave up restarting: more than " +
                std::to_string(st.window.limits().max_restarts) + " node losses within " +
                std::to_string(st.window.limits().period.count()) + " ms";
  if (!restart) log(st, "node '" + peer + "' lost" + gave_up);
  for (auto& p : lost) {
    if (!p.exported.empty()) st.cfg.release(std::move(p.exported));
    auto& t = p.task;
    if (restart && p.actor && t->attempts < p.actor->spec().options.max_task_retries) {
      ++t->attempts;
      if (follow_actor(st, p, why)) continue;
      --t->attempts;
    }
    // Other actor calls fail (their actor was there); a task pinned there too.
    bool call = !t->method.empty();
    if (call && p.actor && p.actor->dead()) {
      t->result->set_error({errc::actor_died, "'" + t->name + "' was running on node '" +
                                                  peer +
                                                  "': " + p.actor->death_reason()});
      continue;
    }
    if (!call) t->lost_on.push_back(peer);
    if (!restart || call || t->options.node == peer ||
        !rerun(st, t, "node '" + peer + "' was lost"))
      t->result->set_error(
          {call ? errc::actor_died : errc::worker_died,
           "'" + t->name + "' was running on node '" + peer +
               "', whose connection closed: " + why +
               (call ? ""
                     : " (after " + std::to_string(t->attempts + 1) + " attempt(s))") +
               gave_up});
  }
}


constexpr std::chrono::milliseconds join_poll{50};

// Sends what waited for nodes that joined since; fails what waited too long.
void send_waiting(owner_self self) {
  auto& st = self->state;
  for (auto i = st.waiting.begin(); i != st.waiting.end();) {
    auto& [k, w] = *i;
    auto c = st.children.find(k);
    if (c == st.children.end()) {
      i = st.waiting.erase(i);
    } else if (st.cfg.joined(w.node)) {
      st.cfg.send(w.node, std::move(w.message));
      i = st.waiting.erase(i);
    } else if (now(st) >= w.until) {
      auto t = c->second.task;
      if (st.cfg.release) st.cfg.release(c->second.exported);
      st.children.erase(c);
      t->result->set_error(
          {errc::node_unreachable,
           "'" + t->name + "' waited " + std::to_string(st.cfg.join_wait.count()) +
               " ms for node '" + w.node + "', which has not joined the cluster"});
      i = st.waiting.erase(i);
    } else {
      ++i;
    }
  }
  if (!st.waiting.empty()) self->delayed_send(self, join_poll, tick_atom::value);
}

owner_actor::behavior_type owner(owner_self self, owner_config cfg) {
  self->state.cfg = std::move(cfg);
  self->state.window = restart_window{self->state.cfg.intensity};
  auto borrows = self->state.cfg.borrows;
  caf::weak_actor_ptr weak = caf::actor_cast<caf::weak_actor_ptr>(self);
  borrows.notify_done = [weak](const object_key& k) {
    if (auto a = caf::actor_cast<owner_actor>(weak.lock()))
      caf::anon_send(a, done_atom::value, k);
  };
  borrows.after_borrows = [weak](std::function<void()> then) {
    if (auto a = caf::actor_cast<owner_actor>(weak.lock()))
      caf::anon_send(a, barrier_atom::value, borrow_barrier{std::move(then)});
  };
  self->state.borrows = std::make_unique<borrow_table>(std::move(borrows));
  self->set_exit_handler([=](const caf::exit_msg& x) {
    auto& st = self->state;
    st.borrows->stop("the node is stopping");
    for (auto& [k, p] : st.children)
      p.task->result->set_error(
          {errc::runtime_stopped, "node '" + st.cfg.node + "' stopped before '" +
                                      p.task->name + "' came back from node '" + p.node +
                                      "'"});
    st.children.clear();
    st.waiting.clear();
    self->quit(x.reason);
  });
  return {
      [=](track_atom, pending_call& p, const std::string& node, wire_msg::message& m) {
        auto& st = self->state;
        auto k = key_of(p.task->result->id());
        // Copies of a task run on several nodes go to nodes alive now.
        for (auto& n : p.copies)
          st.cfg.send(n, m);
        st.children[k] = std::move(p);
        if (!st.cfg.joined || st.cfg.joined(node)) return st.cfg.send(node, std::move(m));
        if (st.waiting.empty()) self->delayed_send(self, join_poll, tick_atom::value);
        st.waiting[k] = {node, std::move(m), now(st) + st.cfg.join_wait};
      },
      [=](tick_atom) { send_waiting(self); },
      [=](placed_atom, const std::string& from, wire_msg::task_placed& m) {
        on_placed(self->state, from, m);
      },
      [=](result_atom, const std::string& from, wire_msg::task_result& m) {
        on_result(self->state, from, m);
      },
      [=](hand_over_atom, const std::string& from, wire_msg::objects_hand_over& m) {
        // Behind the results `from` sent before: the pulls they started are under way.
        if (self->state.cfg.handed_over) self->state.cfg.handed_over(from, std::move(m));
      },
      [=](lost_atom, const std::string& peer, const std::string& why) {
        on_lost(self, peer, why);
      },
      [=](retry_atom, const detail::task_ptr& t, const std::string& why, error& e) {
        if (!rerun(self->state, t, why)) t->result->set_error(std::move(e));
      },
      [=](cancel_atom, const object_key& k) {
        auto& st = self->state;
        auto i = st.children.find(k);
        if (i == st.children.end() || i->second.actor) return;
        auto& c = i->second;
        auto running = copies_but(c, "");
        if (!c.streaming_on.empty() &&
            std::find(running.begin(), running.end(), c.streaming_on) == running.end())
          running.push_back(c.streaming_on);
        for (auto& n : running) {
          st.cfg.send(n, wire_msg::task_cancel{{k.first, k.second}});
          st.losers[k].insert(n);
        }
        if (!c.exported.empty()) st.cfg.release(std::move(c.exported));
        st.children.erase(i);
        st.waiting.erase(k);
      },
      [=](stream_atom, const std::string& from, wire_msg::stream_item& m) {
        on_stream_item(self->state, from, m);
      },
      [=](stream_atom, const object_key& k, uint64_t taken) {
        auto& st = self->state;
        auto i = st.children.find(k);
        if (i == st.children.end()) return;
        auto& c = i->second;
        st.cfg.send(c.streaming_on.empty() ? c.node : c.streaming_on,
                    wire_msg::stream_ack{{k.first, k.second}, taken});
      },
      [=](count_atom) { return static_cast<uint64_t>(self->state.children.size()); },
      [=](borrow_atom, const std::string& from, const wire_msg::object_borrow& m) {
        self->state.borrows->on_borrow(from, m);
      },
      [=](unborrow_atom, const std::string& from, const wire_msg::object_unborrow& m) {
        self->state.borrows->on_unborrow(from, m);
      },
      [=](done_atom, const object_key& k) { self->state.borrows->on_done(k); },
      [=](borrow_atom, const borrow_request& r) {
        self->state.borrows->borrow(r.slot, r.type);
      },
      [=](borrow_atom, const std::string& from, wire_msg::object_borrowed& m) {
        self->state.borrows->on_borrowed(from, m);
      },
      [=](unborrow_atom, const object_key& k) { self->state.borrows->dropped(k); },
      [=](barrier_atom, borrow_barrier& b) {
        self->state.borrows->barrier(std::move(b.then));
      },
      [=](borrows_atom) {
        auto& b = *self->state.borrows;
        return caf::result<uint64_t, uint64_t>{static_cast<uint64_t>(b.lent()),
                                               static_cast<uint64_t>(b.borrowed())};
      },
  };
}

} // namespace

owner_actor spawn_owner(caf::actor_system& sys, owner_config cfg) {
  return sys.spawn(owner, std::move(cfg));
}

owner_ref::owner_ref(owner_actor a)
    : actor_(std::move(a)), unit_(std::make_shared<inline_unit>(actor_)) {}

} // namespace swarm::actors
