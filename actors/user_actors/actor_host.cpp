#include "actors/user_actors/actor_host.hpp"

#include <caf/all.hpp>

#include <deque>
#include <iterator>

#include "actors/scheduling/local_scheduler.hpp"
#include "actors/scheduling/protocol.hpp"
#include "actors/user_actors/applied_calls.hpp"
#include "actors/user_actors/protocol.hpp"
#include "actors/workers/call_executor.hpp"
#include "framework/detail/core.hpp"
#include "framework/supervision.hpp"

namespace swarm::actors {

namespace {

// A call of a priority above the default goes to the host's urgent mailbox queue, read
// ahead of the ordinary calls waiting there; the host orders what it holds.
void send_call(const caf::actor& host, detail::task_ptr call) {
  if (call->options.priority > 0)
    caf::anon_send<caf::message_priority::high>(host, call_atom::value, std::move(call));
  else
    caf::anon_send(host, call_atom::value, std::move(call));
}

} // namespace

host_record::host_record(detail::actor_spec spec, std::shared_ptr<node_liveness> node,
                         bool supervised)
    : actor_record(std::move(spec)), node_(std::move(node)), supervised_(supervised) {}

host_record::~host_record() {
  std::lock_guard<std::mutex> node_guard{node_->mtx};
  std::lock_guard<std::mutex> guard{mtx_};
  if (node_->alive && host_) caf::anon_send_exit(host_, caf::exit_reason::user_shutdown);
}

caf::actor host_record::host() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return host_;
}

void host_record::set_host(caf::actor a) {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    host_ = std::move(a);
    restarting_ = false;
    unrun_ = 0;
    // Under the lock, so a call made meanwhile cannot overtake those held.
    for (auto& call : held_)
      send_call(host_, std::move(call));
    held_.clear();
  }
  host_set_.notify_all();
}

bool host_record::deliver(detail::task_ptr& call) {
  std::lock_guard<std::mutex> guard{mtx_};
  if (host_) {
    // Sent under the lock: a restart that begins after this finds it in the mailbox.
    send_call(host_, std::move(call));
    return true;
  }
  if (!restarting_) return false;
  held_.push_back(std::move(call));
  return true;
}

void host_record::begin_restart(const caf::actor_addr& old, std::string cause) {
  std::lock_guard<std::mutex> guard{mtx_};
  if (!host_ || host_.address() != old) return;
  host_ = nullptr;
  restarting_ = true;
  restart_cause_ = std::move(cause);
}

void host_record::hold_unrun(std::deque<detail::task_ptr> calls) {
  std::lock_guard<std::mutex> guard{mtx_};
  if (!restarting_) return; // dropped: their futures fail as the tasks go
  for (auto& call : calls)
    held_.insert(held_.begin() + static_cast<std::ptrdiff_t>(unrun_++), std::move(call));
}

std::string host_record::take_restart_cause() {
  std::lock_guard<std::mutex> guard{mtx_};
  return std::exchange(restart_cause_, {});
}

void host_record::give_up(const std::string& why) {
  std::deque<detail::task_ptr> held;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    host_ = nullptr; // ending, if not gone yet: a late begin_restart changes nothing
    restarting_ = false;
    held.swap(held_);
    unrun_ = 0;
  }
  mark_dead(why);
  for (auto& call : held)
    if (call->try_claim(0, detail::task_phase::cancelled))
      call->result->set_error({errc::actor_died, why});
}

bool host_record::wait_for_host(std::chrono::steady_clock::time_point deadline) const {
  std::unique_lock<std::mutex> guard{mtx_};
  return host_set_.wait_until(guard, deadline, [this] { return host_ != nullptr; });
}

detail::actor_record_ptr host_record::forward() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return forward_;
}

detail::actor_record_ptr host_record::set_forward(detail::actor_record_ptr to) {
  std::lock_guard<std::mutex> guard{mtx_};
  if (!forward_) forward_ = std::move(to);
  return forward_;
}

void host_record::detach() {
  caf::actor dropped;
  std::lock_guard<std::mutex> guard{mtx_};
  dropped.swap(host_);
}

namespace {

using clock = std::chrono::steady_clock;

int64_t micros(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch())
      .count();
}

struct host_state {
  host_state(detail::core& n, detail::actor_spec s, std::weak_ptr<host_record> r,
             bool under_supervisor)
      : node(n), spec(std::move(s)), record(std::move(r)), ctx(n, n.new_owner_id()),
        restarts({spec.options.max_restarts, std::chrono::hours(24 * 365 * 100)}),
        supervised(under_supervisor) {}

  ~host_state() {
    stop_instance();
    if (gpu_scheduler) caf::anon_send(gpu_scheduler, gpu_unhold_atom::value, self_id);
    auto why = "actor of type '" + spec.type_name + "' stopped";
    // Killed outright by its supervisor: calls wait for what it decides.
    if (supervised && death.empty()) hand_over(why);
    // The node may be stopping: nothing is sent on from here.
    fail_pending(why, false);
    refuse_held(why, UINT64_MAX, false);
  }

  detail::core& node;
  detail::actor_spec spec;
  std::weak_ptr<host_record> record;
  // The last calls run, kept in each state saved (calls run exactly once).
  applied_calls applied{spec.options.checkpoint_every > 0 ? spec.options.answers_kept
                                                          : 0};
  caf::actor_addr self_addr;
  uint64_t self_id = 0;
  // Where it asked for the GPUs it holds for its life (none when it demands none);
  // `holding` until they come: no instance exists and no call runs before.
  caf::actor gpu_scheduler;
  bool holding = false;
  // A supervised host that ends hands the calls that reach it over to its record
  // (`ending`), then quits with `end_reason` for its supervisor to decide.
  bool ending = false;
  caf::error end_reason;
  context ctx;
  restart_window restarts;
  std::unique_ptr<actor> instance;
  std::deque<detail::task_ptr> pending;
  std::string death; // why the actor died for good; empty while alive
  bool waiting = false;
  // Once a call of a priority other than 0 came, `pending` is kept highest first and
  // each call runs from its own `next_atom`, sent behind what reached the mailbox: the
  // calls there are sorted in before the next one runs.
  bool by_priority = false;
  bool next_sent = false;
  uint32_t in_flight = 0;                 // calls that returned futures not yet done
  uint64_t calls = 0;                     // since the last checkpoint
  // Answers to callers other than the owner, held until the owner keeps the state
  // numbered `seq` (or a later one); the last numbered state, sent again while any wait.
  struct held_answer {
    uint64_t seq;
    detail::task_ptr call;
    call_outcome outcome;
  };
  std::deque<held_answer> held;
  uint64_t checkpoint_seq = 0;
  uint64_t kept_seq = 0; // the latest state the owner said it keeps
  std::vector<uint8_t> unanswered;
  bool resend_due = false;
  std::shared_ptr<call_histogram> timing; // the record's
  // The last calls that ended: a ring, filled up to `calls_kept`, `next` the oldest
  // once full (entries are overwritten in place: no allocation per call).
  std::vector<call_event> recent;
  size_t next = 0;

  void remember(const detail::task_spec& task, bool failed, int64_t started_us,
                int64_t ended_us) {
    if (recent.size() < calls_kept) {
      recent.push_back({task.result->id(), task.method, failed, started_us, ended_us});
      return;
    }
    auto& e = recent[next];
    e.id = task.result->id();
    e.method = task.method;
    e.failed = failed;
    e.started_us = started_us;
    e.ended_us = ended_us;
    next = (next + 1) % calls_kept;
  }

  std::vector<call_event> recent_in_order() const {
    std::vector<call_event> out(recent.begin() + static_cast<std::ptrdiff_t>(next),
                                recent.end());
    out.insert(out.end(), recent.begin(),
               recent.begin() + static_cast<std::ptrdiff_t>(next));
    return out;
  }
  // Restarts are its supervisor's business: a crash ends this host.
  bool supervised;

  void stop_instance() {
    if (!instance) return;
    try {
      instance->on_stop();
    } catch (...) {
      // The actor is going away either way; a throwing on_stop changes nothing.
    }
    instance.reset();
  }

  // Adds `call` to those to run: last, or behind the calls of its priority or higher.
  void enqueue(detail::task_ptr call) {
    auto prio = call->options.priority;
    by_priority |= prio != 0;
    auto at = pending.end();
    if (by_priority)
      while (at != pending.begin() && (*std::prev(at))->options.priority < prio)
        --at;
    // A call that goes before one waiting for its arguments is not held back by it.
    if (at == pending.begin()) waiting = false;
    pending.insert(at, std::move(call));
  }

  // The held answers whose states the owner did not keep: the calls' effects are not in
  // the actor's state (its owner restarted it elsewhere). A caller on another node runs
  // the call again where the actor is now (as when a node is lost: `node_unreachable`);
  // one on this node too, while `follow` (see `follow_moved`).
  void refuse_held(const std::string& why, uint64_t up_to = UINT64_MAX,
                   bool follow = true) {
    while (!held.empty() && held.front().seq <= up_to) {
      auto c = std::move(held.front().call);
      held.pop_front();
      if (follow && c->origin.empty() && follow_moved(c)) continue;
      c->result->set_error({c->origin.empty() ? errc::actor_died : errc::node_unreachable,
                            "'" + c->name + "' ran on an instance of actor type '" +
                                spec.type_name + "' on node '" + node.node_name() +
                                "' that its owner replaced: " + why});
    }
  }

  // Fails the calls not run. Those of an instance its owner replaced (its record
  // `moved`) go where the actor is now, as `refuse_held`'s do.
  void fail_pending(const std::string& why, bool follow = true) {
    auto r = record.lock();
    bool moved = r && r->moved();
    for (auto& t : pending) {
      if (follow && t->origin.empty() && t->phase() == detail::task_phase::queued &&
          follow_moved(t))
        continue;
      if (t->try_claim(0, detail::task_phase::cancelled))
        t->result->set_error(
            {moved && !t->origin.empty() ? errc::node_unreachable : errc::actor_died,
             why});
    }
    pending.clear();
  }

  // A call made on this node to an instance its owner replaced: it goes through the
  // actor's record here, which follows the actor to where it lives now (as the owner of
  // a call from another node sends it there again). False for a streaming call (its
  // items may be out).
  bool follow_moved(detail::task_ptr& call) {
    auto r = record.lock();
    if (!r || !r->moved() || call->stream || call->reader) return false;
    // Not run there yet (the run here did not count).
    call->claim.store(detail::make_claim(call->epoch() + 1, detail::task_phase::queued));
    node.call(*r, std::move(call));
    return true;
  }

  void die(const std::string& why) {
    death = why;
    instance.reset();
    if (supervised) {
      hand_over(why);
      return;
    }
    if (auto r = record.lock()) r->mark_dead(why);
    fail_pending(why);
    refuse_held(why);
  }

  // Calls from now on wait at the record for the supervisor's decision, and those not
  // run here go there first.
  void hand_over(const std::string& why) {
    auto r = record.lock();
    if (!r) return;
    r->begin_restart(self_addr, why);
    r->hold_unrun(std::exchange(pending, {}));
  }

  // Creates (or re-creates after `cause`) the instance; a constructor or hook that throws
  // counts as another crash.
  void start(const error* cause) {
    calls = 0;
    for (;;) {
      std::string what;
      try {
        begin_on_devices(node, ctx); // a constructor may launch on its devices
        instance = spec.factory();
        detail::actor_access::attach(*instance, ctx, spec.type_name);
        auto r = record.lock();
        auto state = applied.unwrap(r ? r->checkpoint() : std::vector<uint8_t>{});
        if (!state.empty()) instance->on_restore(state);
        instance->on_start();
        if (cause) instance->on_restart(*cause);
        return;
      } catch (const std::exception& e) {
        what = e.what();
      } catch (...) {
        what = "non-standard exception";
      }
      instance.reset();
      error failed{errc::actor_died,
                   "actor of type '" + spec.type_name + "' failed to start: " + what};
      if (supervised || !restarts.allow(clock::now())) {
        die(failed.message);
        return;
      }
      cause = &failed;
    }
  }

  // Whether the answer to `call` waits for the owner to keep the state with its effect:
  // the owner is on another node, and the caller is not the owner (whose answer
  // carries the state in the call's `state_for_owner`, which the owner counts once it
  // keeps the state: a state sent apart could be lost on its way while the answer came).
  bool answer_waits(const detail::task_spec& call) const {
    return spec.on_checkpoint && !spec.owner_node.empty() &&
           call.origin != spec.owner_node;
  }

  // Saves the state every `checkpoint_every` calls; false (and `failure` set) when the
  // hook threw. `numbered`: an owner's answer is asked for, and `*numbered` is the
  // state's number then (0 when none was saved or no answer will come). `carried`:
  // the state goes to the owner in a call's answer, not apart.
  bool checkpoint(error& failure, uint64_t* numbered = nullptr,
                  detail::carried_state* carried = nullptr) {
    auto every = spec.options.checkpoint_every;
    if (every == 0 || ++calls < every) return true;
    return save_state(failure, numbered, carried);
  }

  // Saves the state now (see `checkpoint`).
  bool save_state(error& failure, uint64_t* numbered = nullptr,
                  detail::carried_state* carried = nullptr) {
    calls = 0;
    try {
      auto state = applied.wrap(instance->on_checkpoint());
      if (spec.options.durable_checkpoints) {
        auto& name = spec.name();
        if (auto ok =
                node.kv(detail::kv_op::put, detail::durable_checkpoint_key(name), state);
            !ok)
          // Kept in memory all the same: only a restart of the cluster needs the copy.
          node.warn("actor '" + name + "': its checkpoint is not in the control store: " +
                    ok.err().to_string());
      }
      if (spec.on_checkpoint) {
        auto seq = ++checkpoint_seq;
        bool answer = numbered != nullptr;
        if (carried) {
          carried->seq = seq;
          carried->bytes = state;
        } else if (!spec.on_checkpoint(state, seq, answer)) {
          answer = false;
        }
        // While answers wait, the latest state is the one sent again.
        if (answer || !held.empty()) unanswered = state;
        if (numbered) *numbered = answer ? seq : 0;
      }
      if (auto r = record.lock()) r->save_checkpoint(std::move(state));
      return true;
    } catch (const std::exception& e) {
      failure = {errc::actor_died, "actor of type '" + spec.type_name +
                                       "' crashed in on_checkpoint: " + e.what()};
    } catch (...) {
      failure = {errc::actor_died, "actor of type '" + spec.type_name +
                                       "' crashed in on_checkpoint"};
    }
    return false;
  }

  void crash(const error& cause) {
    instance.reset();
    if (supervised) {
      die(cause.message);
      return;
    }
    if (!restarts.allow(clock::now())) {
      die(cause.message + "; restarts used up (max_restarts = " +
          std::to_string(spec.options.max_restarts) + ")");
      return;
    }
    start(&cause);
  }
};

using host_actor = caf::stateful_actor<std::unique_ptr<host_state>>;

// A supervised host ends: calls already in its mailbox reach it before this message and
// are handed over to the record; then it quits with `reason`.
void end(host_actor* self, caf::error reason) {
  auto& st = *self->state;
  if (st.ending) return;
  st.ending = true;
  st.end_reason = std::move(reason);
  self->send(self, end_atom::value);
}

// The actor stops for good, `why`: killed, or stopped where its owner replaced it.
void stop(host_actor* self, const std::string& why) {
  auto& st = *self->state;
  st.stop_instance();
  st.die(why);
  if (st.supervised)
    end(self, caf::exit_reason::user_shutdown);
  else
    self->quit(caf::exit_reason::user_shutdown);
}

// Runs the next call from its own message, once those in the mailbox ahead of it are
// sorted in (calls of several priorities came).
void run_next_later(host_actor* self) {
  auto& st = *self->state;
  if (st.next_sent || st.pending.empty()) return;
  st.next_sent = true;
  self->send(self, next_atom::value);
}

// The call's result goes out.
void answer(host_actor* self, detail::task_ptr task, call_outcome outcome) {
  auto& st = *self->state;
  publish(st.node, *task, std::move(outcome));
  if (task->forwarded) {
    ++st.in_flight;
    task->result->when_done([addr = self->address()] {
      if (auto h = caf::actor_cast<caf::actor>(addr)) caf::anon_send(h, done_atom::value);
    });
  }
}

// The call's result waits for the owner to keep state `seq`; while any waits, the last
// numbered state goes to the owner again each `checkpoint_resend`.
void hold(host_actor* self, detail::task_ptr task, call_outcome outcome, uint64_t seq) {
  auto& st = *self->state;
  st.held.push_back({seq, std::move(task), std::move(outcome)});
  if (st.resend_due) return;
  st.resend_due = true;
  self->delayed_send(self, st.spec.checkpoint_resend, resend_atom::value);
}

// The owner kept state `seq` (`taken`), or refused it: the answers held for it and the
// states before it go out, or are refused.
void settle(host_actor* self, uint64_t seq, bool taken) {
  auto& st = *self->state;
  if (!taken) {
    // Handles here follow the actor to where its owner restarted it.
    if (auto r = st.record.lock()) r->mark_moved();
    return st.refuse_held("node '" + st.spec.owner_node +
                              "' restarted it elsewhere, without this call's effect",
                          seq);
  }
  st.kept_seq = std::max(st.kept_seq, seq);
  while (!st.held.empty() && st.held.front().seq <= seq) {
    auto h = std::move(st.held.front());
    st.held.pop_front();
    answer(self, std::move(h.call), std::move(h.outcome));
  }
}

// The answer to a call that ran already: it counts only where the owner keeps a state
// with the call's effect, as a run's answer does. The state this instance restored is
// one (the owner restarted it from that state); so is its latest state saved, once the
// owner keeps it, which this instance may be too stale to see happen (its owner
// restarted it elsewhere: the call then follows the actor there).
void answer_again(host_actor* self, detail::task_ptr task, call_outcome outcome) {
  auto& st = *self->state;
  auto r = st.record.lock();
  if (st.checkpoint_seq == 0 || st.kept_seq >= st.checkpoint_seq || !r ||
      !st.spec.on_checkpoint)
    return answer(self, std::move(task), std::move(outcome));
  if (task->state_for_owner) {
    // The owner's own call: its answer carries the latest state, which the owner checks
    // as it checks a run's.
    task->state_for_owner->seq = st.checkpoint_seq;
    task->state_for_owner->bytes = r->checkpoint();
    return answer(self, std::move(task), std::move(outcome));
  }
  if (!st.answer_waits(*task)) return answer(self, std::move(task), std::move(outcome));
  st.unanswered = r->checkpoint(); // the latest state, sent again while answers wait
  hold(self, std::move(task), std::move(outcome), st.checkpoint_seq);
}

void resend(host_actor* self) {
  auto& st = *self->state;
  st.resend_due = false;
  if (st.held.empty()) return;
  // No answer will come from an owner the head found dead: the state here is the
  // actor's only one.
  if (!st.spec.on_checkpoint(st.unanswered, st.checkpoint_seq, true))
    return settle(self, UINT64_MAX, true);
  st.resend_due = true;
  self->delayed_send(self, st.spec.checkpoint_resend, resend_atom::value);
}

void drain(host_actor* self) {
  auto& st = *self->state;
  auto most = std::max<uint32_t>(1, st.spec.options.max_concurrency);
  bool ran = false;
  while (!st.pending.empty() && !st.waiting && !st.holding && st.in_flight < most) {
    if (ran && st.by_priority) return run_next_later(self);
    auto& t = st.pending.front();
    if (!st.death.empty()) {
      st.fail_pending(st.death);
      return;
    }
    for (auto& a : t->args) {
      if (a.ref && !a.ref->done()) {
        st.waiting = true;
        a.ref->when_done([addr = self->address()] {
          if (auto h = caf::actor_cast<caf::actor>(addr))
            caf::anon_send(h, resume_atom::value);
        });
        return;
      }
    }
    auto task = std::move(t);
    st.pending.pop_front();
    if (!task->try_claim(0, detail::task_phase::running)) continue; // cancelled
    ran = true;
    // Sent again after its answer was lost (with the node of an earlier instance, whose
    // state with its effect this one restored, or on a connection reset): answered as
    // it was, not run again.
    if (auto* kept = st.applied.find(task->result->id())) {
      task->claim.store(detail::make_claim(0, detail::task_phase::finished));
      auto what = "'" + task->name + "' on actor of type '" + st.spec.type_name + "'";
      answer_again(self, std::move(task),
                   applied_calls::outcome_of(*kept, task->result_type, what));
      continue;
    }
    auto began = std::chrono::system_clock::now();
    begin_on_devices(st.node, st.ctx);
    auto outcome = execute_call(*task, st.instance.get(), st.ctx);
    finish_on_devices(st.node, st.ctx, outcome);
    auto ended = std::chrono::system_clock::now();
    st.timing->record(std::max(ended - began, std::chrono::system_clock::duration{0}));
    st.remember(*task, outcome.what != call_outcome::kind::value, micros(began),
                micros(ended));
    task->claim.store(detail::make_claim(0, detail::task_phase::finished));
    error cause;
    bool crashed = outcome.what == call_outcome::kind::crash;
    if (crashed) cause = outcome.err;
    st.applied.add(task->result->id(), outcome);
    // Saved before the result goes out: whoever sees the result finds its effect in
    // the state a restart restores. The owner's own answer carries the state; another
    // caller's waits until the owner says it keeps it.
    uint64_t numbered = 0;
    if (!crashed)
      crashed = !st.checkpoint(cause, st.answer_waits(*task) ? &numbered : nullptr,
                               task->state_for_owner.get());
    if (numbered != 0)
      hold(self, std::move(task), std::move(outcome), numbered);
    else
      answer(self, std::move(task), std::move(outcome));
    if (crashed) {
      st.crash(cause);
      if (st.supervised) {
        end(self, caf::make_error(caf::sec::runtime_error, st.death));
        return;
      }
    }
  }
}

// Creates the instance (after `restart_cause`, if any) and runs the calls that came.
void begin(host_actor* self, std::string restart_cause) {
  auto& st = *self->state;
  if (restart_cause.empty()) {
    st.start(nullptr);
  } else {
    error cause{errc::actor_died, std::move(restart_cause)};
    st.start(&cause);
  }
  if (st.supervised && !st.death.empty())
    end(self, caf::make_error(caf::sec::runtime_error, st.death));
  else
    drain(self);
}

caf::behavior actor_host(host_actor* self, detail::core* node,
                         std::shared_ptr<host_record> rec, std::string restart_cause,
                         caf::actor scheduler) {
  self->state = std::make_unique<host_state>(*node, rec->spec(), rec, rec->supervised());
  self->state->timing = rec->timing();
  rec.reset(); // the host must not keep its own record (and so itself) alive
  auto& init = *self->state;
  init.self_addr = self->address();
  init.self_id = self->id();
  auto& demand = init.spec.options.resources;
  if (demand.get("GPU") > 0 && scheduler) {
    // Its devices first: a constructor may load a model onto them.
    init.gpu_scheduler = scheduler;
    init.holding = true;
    self->request(scheduler, caf::infinite, gpu_hold_atom::value, init.self_id,
                  demand.get("GPU"), demand.get("gpu_memory"))
        .then(
            [self, restart_cause](std::vector<uint32_t>& ids) {
              auto& st = *self->state;
              st.holding = false;
              st.ctx.set_gpus(std::move(ids));
              begin(self, restart_cause);
            },
            [self](caf::error& e) {
              auto& st = *self->state;
              st.holding = false;
              st.die("actor of type '" + st.spec.type_name +
                     "' cannot hold its GPUs on node '" + st.node.node_name() +
                     "': " + self->home_system().render(e));
              if (st.supervised)
                end(self, caf::make_error(caf::sec::runtime_error, st.death));
            });
  } else {
    begin(self, std::move(restart_cause));
  }
  if (init.supervised) {
    // Asked to stop by its supervisor: it hands its calls over before it goes.
    self->set_exit_handler([self](caf::exit_msg& m) {
      auto& st = *self->state;
      if (st.ending) return;
      st.stop_instance();
      st.hand_over("actor of type '" + st.spec.type_name + "' stopped");
      end(self, m.reason);
    });
  }
  return {
      [self](call_atom, detail::task_ptr& t) {
        auto& st = *self->state;
        if (st.ending) {
          if (auto r = st.record.lock()) r->hold_unrun({std::move(t)});
          return;
        }
        st.enqueue(std::move(t));
        if (st.by_priority)
          run_next_later(self);
        else
          drain(self);
      },
      [self](next_atom) {
        auto& st = *self->state;
        st.next_sent = false;
        if (!st.ending) drain(self);
      },
      [self](resume_atom) {
        if (self->state->ending) return;
        self->state->waiting = false;
        drain(self);
      },
      [self](done_atom) {
        auto& st = *self->state;
        --st.in_flight;
        if (!st.ending) drain(self);
      },
      [self](end_atom) { self->quit(self->state->end_reason); },
      [self](taken_atom, uint64_t seq, bool taken) { settle(self, seq, taken); },
      [self](fence_atom, const std::string& why) {
        auto& st = *self->state;
        if (!st.death.empty() || st.ending) return;
        stop(self, why);
      },
      [self](resend_atom) { resend(self); },
      [self](checkpoint_atom) {
        // Its node stops: the state of the calls since its last checkpoint goes to its
        // owner now, and its restart elsewhere starts from it.
        auto& st = *self->state;
        error failure;
        return st.death.empty() && !st.ending && st.instance &&
               st.spec.options.checkpoint_every > 0 && st.calls > 0 &&
               st.save_state(failure);
      },
      [self](stats_atom, timeline_atom) { return self->state->recent_in_order(); },
      [self](kill_atom, bool restart) {
        auto& st = *self->state;
        if (!st.death.empty() || st.ending) return;
        if (restart && st.holding) return; // not started yet: nothing to restart
        if (restart) {
          st.crash(
              {errc::actor_died, "actor of type '" + st.spec.type_name + "' was killed"});
          if (st.supervised)
            end(self, caf::make_error(caf::sec::runtime_error, st.death));
          else
            drain(self);
          return;
        }
        stop(self, "actor of type '" + st.spec.type_name + "' was killed");
      },
  };
}

} // namespace

caf::actor spawn_actor_host(caf::actor_system& sys, detail::core& node,
                            const std::shared_ptr<host_record>& record,
                            std::string restart_cause, caf::actor scheduler) {
  if (record->spec().options.dedicated_thread)
    return sys.spawn<caf::detached>(actor_host, &node, record, std::move(restart_cause),
                                    std::move(scheduler));
  return sys.spawn(actor_host, &node, record, std::move(restart_cause),
                   std::move(scheduler));
}

} // namespace swarm::actors
