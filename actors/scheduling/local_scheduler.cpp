#include "actors/scheduling/local_scheduler.hpp"

#include <caf/all.hpp>

#include <malloc.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "actors/common/node_stopped.hpp"
#include "actors/scheduling/function_stats.hpp"
#include "actors/scheduling/gpu_slots.hpp"
#include "actors/scheduling/protocol.hpp"
#include "actors/scheduling/task_inbox.hpp"
#include "actors/workers/cpu_worker.hpp"
#include "framework/detail/core.hpp"

namespace swarm::actors {

namespace {

using detail::make_claim;
using detail::task_phase;
using detail::task_ptr;

using detail::now_us;

// Workers blocked in `get` hold a thread but no CPU; this bounds the threads they hold.
constexpr size_t max_threads = 1024;

struct worker_slot {
  caf::actor handle;
  std::deque<task_ptr> inflight; // front: running or next to run
  resource_set lease;
  std::vector<gpu_share> gpus; // the devices its lease holds
  bool leased = false;
  bool blocked = false;
  bool reserve = false; // leased beyond the CPUs (see `priority_reserve`)
};

// GPUs an actor holds for its life, or waits for.
struct actor_hold {
  resource_set demand; // its GPU and gpu_memory
  std::vector<gpu_share> gpus;
  caf::response_promise waiting; // pending while it waits
};

struct scheduler_state {
  scheduler_config config;
  resource_set available;
  gpu_slots gpus{0};
  // By the host's actor id; the waiting ones in the order they asked.
  std::unordered_map<uint64_t, actor_hold> holds;
  std::deque<uint64_t> hold_queue;
  std::vector<worker_slot> workers;
  std::map<int32_t, std::deque<task_ptr>, std::greater<>> ready;
  // The lowest priority submitted so far: a task above it may take a worker back from
  // lower ones (none to look for while every task has the same priority).
  int32_t lowest_seen = std::numeric_limits<int32_t>::max();
  // Whether tasks of more than one job came (then each queue is served by job shares),
  // and the job of the last one.
  bool many_jobs = false;
  std::map<std::string, double> job_pass; // see `pass_of`
  double served_pass = 0;
  std::optional<std::string> last_job;
  // What is known of each function's tasks here (only short ones are pipelined).
  function_stats functions;
  std::deque<task_event> timeline; // the last tasks that ended, oldest first
  std::deque<task_event> failures; // the last tasks that failed, oldest first
  caf::event_based_actor* self = nullptr;
  // Tasks that ended since memory was last given back, and whether a trim is due.
  uint64_t ended_since_trim = 0;
  bool trim_due = false;

  bool idle() const {
    for (auto& [p, q] : ready)
      if (!q.empty()) return false;
    for (auto& w : workers)
      if (!w.inflight.empty()) return false;
    return true;
  }

  // After work, once idle: the trim is set for `trim_after` from now.
  void trim_when_idle() {
    if (trim_due || ended_since_trim == 0 || !idle()) return;
    trim_due = true;
    self->delayed_send(self, config.trim_after, trim_atom::value);
  }

  void on_trim() {
    trim_due = false;
    if (!idle()) return; // set again when it is
    if (config.trim)
      config.trim();
    else
      ::malloc_trim(0);
    ended_since_trim = 0;
  }

  ~scheduler_state() {
    // Whatever has not started goes back to the inbox for a successor; when the node
    // stops, it will not run and its owner learns why.
    auto stop = [this](const task_ptr& t) {
      if (!t->requeue()) return;
      bool accepted = false;
      if (config.inbox) config.inbox->push(t, accepted);
      if (!accepted && t->cancel_queued())
        t->result->set_error(node_stopped(*config.node, t->name, "ran"));
    };
    for (auto& [prio, q] : ready)
      for (auto& t : q)
        stop(t);
    for (auto& w : workers) {
      for (auto& t : w.inflight)
        stop(t);
      if (w.handle) caf::anon_send_exit(w.handle, caf::exit_reason::user_shutdown);
    }
  }

  void start_worker(size_t index) {
    worker_config wc;
    wc.index = index;
    wc.scheduler = self->address();
    wc.node = config.node;
    wc.pin_to = index < config.initial_workers ? config.topo : nullptr;
    auto w = config.spawn_worker ? config.spawn_worker(self->home_system(), wc)
                                 : spawn_cpu_worker(self->home_system(), wc);
    self->monitor(w);
    if (index == workers.size()) workers.emplace_back();
    workers[index] = worker_slot{};
    workers[index].handle = std::move(w);
  }

  // Whether demand `d` fits what is free now, its GPUs on devices with room.
  bool fits_now(const resource_set& d) const {
    return d.fits_in(available) && gpus.fits(d.get("GPU"));
  }

  // Takes demand `d` from what is free; the device shares it got.
  std::vector<gpu_share> take(const resource_set& d) {
    available -= d;
    return gpus.take(d.get("GPU"));
  }

  // `w` holds demand `d` until it falls idle (see `release_if_idle`).
  void lease(worker_slot& w, const resource_set& d, bool reserve = false) {
    w.leased = true;
    w.reserve = reserve;
    w.lease = d;
    w.gpus = take(d);
  }

  // Gives back what `take` took.
  void give(const resource_set& d, const std::vector<gpu_share>& shares) {
    available += d;
    gpus.give(shares);
  }

  // Whether `t` may wait at a busy worker behind its running task: when its function's
  // runs have been short. A task whose length is not known yet waits here, where the
  // first worker free takes it: a short task is never stuck behind a long one, and
  // short ones (once known) keep their workers busy without a round trip each.
  bool pipelines(const detail::task_spec& t) const {
    auto mean = functions.mean_run_us(t);
    return mean && *mean < static_cast<double>(config.pipeline_below.count());
  }

  // Picks a worker for task `t`: an idle one first (spreading load), then (for a short
  // task) the least loaded worker already leased for its shape, then a new worker.
  std::optional<size_t> pick(const detail::task_spec& t) {
    auto& d = t.options.resources;
    bool fits = fits_now(d);
    bool may_pipeline = pipelines(t);
    std::optional<size_t> pipelined;
    for (size_t i = 0; i < workers.size(); ++i) {
      auto& w = workers[i];
      if (w.blocked) continue;
      if (!w.leased) {
        if (fits) return i;
      } else if (may_pipeline && w.lease == d &&
                 w.inflight.size() <= config.pipeline_depth &&
                 (!pipelined ||
                  w.inflight.size() < workers[*pipelined].inflight.size())) {
        pipelined = i;
      }
    }
    if (pipelined) return pipelined;
    if (fits && workers.size() - blocked_count() < config.max_workers &&
        workers.size() < max_threads) {
      start_worker(workers.size());
      return workers.size() - 1;
    }
    return std::nullopt;
  }

  // `t` would wait while a CPU runs lower-priority work: a reserve worker for it, its
  // lease less one CPU, when one is left and the rest of its demand is free.
  std::optional<size_t> reserve_for(const detail::task_spec& t) {
    auto prio = t.options.priority;
    size_t in_use = 0;
    bool below = false;
    for (auto& w : workers) {
      if (!w.leased) continue;
      in_use += w.reserve ? 1 : 0;
      below |= !w.reserve && !w.blocked && !w.inflight.empty() &&
               w.inflight.front()->options.priority < prio;
    }
    // One CPU is lent; a task that asks for more needs the rest free.
    auto lent = t.options.resources;
    lent.set("CPU", std::max(0.0, lent.get("CPU") - 1));
    if (!below || in_use >= config.priority_reserve || !fits_now(lent))
      return std::nullopt;
    std::optional<size_t> free;
    for (size_t i = 0; i < workers.size() && !free; ++i)
      if (!workers[i].leased && !workers[i].blocked) free = i;
    if (!free) {
      if (workers.size() >= max_threads) return std::nullopt;
      start_worker(workers.size());
      free = workers.size() - 1;
    }
    lease(workers[*free], lent, true);
    return free;
  }

  // `t` would wait behind others: takes back the lower-priority tasks dispatched to a
  // worker of its shape that have not started (pipelined behind its running one), so
  // that `t` runs there next and they run after it. The worker of the most such tasks,
  // if any; their dispatches are stale from now on (the worker skips them). When no
  // worker can take `t` (`none_free`) and none of its shape holds such tasks, it takes
  // them back from every worker: `t` runs on the first lease that ends, before them.
  std::optional<size_t> preempt_for(const detail::task_spec& t, bool none_free) {
    auto prio = t.options.priority;
    std::optional<size_t> best;
    size_t best_lower = 0;
    for (size_t i = 0; i < workers.size(); ++i) {
      auto& w = workers[i];
      if (w.blocked || !w.leased || !(w.lease == t.options.resources)) continue;
      auto lower = static_cast<size_t>(
          std::count_if(w.inflight.begin(), w.inflight.end(), [&](const task_ptr& x) {
            return x->options.priority < prio && x->phase() == task_phase::queued;
          }));
      if (lower > best_lower) {
        best = i;
        best_lower = lower;
      }
    }
    if (!best) {
      if (none_free)
        for (auto& w : workers)
          if (!w.blocked && w.leased) take_back_below(prio, w);
      return std::nullopt;
    }
    auto& w = workers[*best];
    take_back_below(prio, w);
    if (w.inflight.size() > config.pipeline_depth) return std::nullopt;
    return best;
  }

  // Queues again the tasks below `prio` dispatched to `w` that have not started.
  void take_back_below(int32_t prio, worker_slot& w) {
    std::deque<task_ptr> keep;
    std::map<int32_t, std::deque<task_ptr>> back; // by priority, in dispatch order
    for (auto& x : w.inflight) {
      if (x->options.priority < prio && x->requeue())
        back[x->options.priority].push_back(x);
      else
        keep.push_back(x);
    }
    w.inflight.swap(keep);
    // Ahead of what waited at their priority: they were dispatched before it.
    for (auto& [p, xs] : back) {
      auto& q = ready[p];
      q.insert(q.begin(), xs.begin(), xs.end());
    }
    release_if_idle(w);
  }

  size_t blocked_count() const {
    return static_cast<size_t>(
        std::count_if(workers.begin(), workers.end(), [](auto& w) { return w.blocked; }));
  }

  // Notes the job and priority of a task that came.
  void arrived(const detail::task_spec& t) {
    lowest_seen = std::min(lowest_seen, t.options.priority);
    if (!last_job) {
      last_job = t.options.job;
    } else if (*last_job != t.options.job) {
      many_jobs = true;
      last_job = t.options.job;
    }
  }

  // Where in `q` the next task to start is: the first of the job whose turn it is (the
  // lowest pass, see `pass_of`); the front while one job ever came. Looks at most this
  // far into the queue.
  static constexpr size_t fair_scan = 1024;
  size_t next_index(const std::deque<task_ptr>& q) const {
    if (!many_jobs || q.size() < 2) return 0;
    std::set<std::string_view> looked;
    size_t best = 0;
    double best_pass = std::numeric_limits<double>::max();
    for (size_t i = 0; i < q.size() && i < fair_scan; ++i) {
      auto& t = *q[i];
      if (t.phase() != task_phase::queued || !looked.insert(t.options.job).second)
        continue;
      if (auto pass = pass_of(t.options.job); pass < best_pass) {
        best = i;
        best_pass = pass;
      }
    }
    return best;
  }

  // Stride scheduling between jobs: each task handed to a worker advances its job's
  // pass by 1 / job_share, and the job of the lowest pass goes next. A job that waited
  // (or is new) starts from the pass of the last job served: it neither starves the
  // others with a backlog of turns nor waits behind theirs.
  double pass_of(const std::string& job) const {
    auto i = job_pass.find(job);
    return i == job_pass.end() ? served_pass : std::max(i->second, served_pass);
  }

  void served(const detail::task_spec& t) {
    if (!many_jobs) return;
    served_pass = pass_of(t.options.job);
    job_pass[t.options.job] = served_pass + 1 / t.options.job_share;
    if (job_pass.size() > 64)
      for (auto i = job_pass.begin(); i != job_pass.end();)
        i = i->second <= served_pass ? job_pass.erase(i) : std::next(i);
  }

  scheduler_load load() const {
    scheduler_load out;
    std::map<int32_t, uint32_t, std::greater<>> by_priority;
    for (auto& [p, q] : ready) {
      out.queued += q.size();
      for (auto& t : q)
        if (t->phase() == task_phase::queued) ++by_priority[p];
    }
    for (auto& w : workers) {
      out.dispatched += w.inflight.size();
      out.blocked += w.blocked ? 1 : 0;
      for (auto& t : w.inflight) {
        out.running += t->phase() == task_phase::running ? 1 : 0;
        if (t->phase() != task_phase::finished) ++by_priority[t->options.priority];
      }
    }
    out.workers = workers.size();
    out.available = available;
    out.by_priority.assign(by_priority.begin(), by_priority.end());
    return out;
  }

  // An actor asks for the GPUs of `demand` for its life: its devices once they are free
  // (ahead of queued tasks); infeasible when the node could never hold them.
  caf::result<std::vector<uint32_t>> hold(uint64_t actor, resource_set demand) {
    if (!demand.fits_in(config.total) ||
        !gpu_slots{config.total.get("GPU")}.fits(demand.get("GPU")))
      return caf::make_error(caf::sec::runtime_error,
                             "its GPU demand " + demand.to_string() +
                                 " exceeds what node '" + config.node->node_name() +
                                 "' has: " + config.total.to_string());
    auto& h = holds[actor];
    h.demand = std::move(demand);
    h.waiting = self->make_response_promise();
    hold_queue.push_back(actor);
    serve_holds();
    return h.waiting;
  }

  // The actor is gone: what it held is free again (or it no longer waits).
  void unhold(uint64_t actor) {
    auto i = holds.find(actor);
    if (i == holds.end()) return;
    if (i->second.waiting.pending()) {
      hold_queue.erase(std::find(hold_queue.begin(), hold_queue.end(), actor));
      i->second.waiting.deliver(
          caf::make_error(caf::sec::runtime_error, "the actor stopped while it waited"));
    } else {
      give(i->second.demand, i->second.gpus);
    }
    holds.erase(i);
    dispatch_ready();
  }

  // Grants waiting actors their GPUs, first come first served.
  void serve_holds() {
    while (!hold_queue.empty()) {
      auto& h = holds[hold_queue.front()];
      if (!fits_now(h.demand)) return;
      h.gpus = take(h.demand);
      h.waiting.deliver(device_ids(h.gpus));
      hold_queue.pop_front();
    }
  }

  void dispatch_ready() {
    serve_holds();
    for (auto& [prio, q] : ready) {
      while (!q.empty()) {
        if (q.front()->phase() != task_phase::queued) {
          q.pop_front();
          continue;
        }
        auto at = q.begin() + static_cast<std::ptrdiff_t>(next_index(q));
        auto& t = *at;
        auto w = pick(*t);
        // It would wait behind others: a reserve worker when lower ones run, else lower
        // ones that have not started go after it.
        if ((!w || !workers[*w].inflight.empty()) && t->options.priority > lowest_seen) {
          if (auto reserved = reserve_for(*t))
            w = reserved;
          else if (auto taken = preempt_for(*t, !w))
            w = taken;
          else if (!w)
            w = pick(*t); // a lease given back may fit it now
        }
        if (!w) return; // keep priority order: nothing lower runs before this one
        auto& slot = workers[*w];
        if (!slot.leased) lease(slot, t->options.resources);
        self->send(slot.handle, run_atom::value,
                   dispatch{t, t->epoch(), device_ids(slot.gpus)});
        served(*t);
        slot.inflight.push_back(std::move(t));
        q.erase(at);
      }
    }
  }

  void release_if_idle(worker_slot& w) {
    if (w.inflight.empty() && w.leased && !w.blocked) {
      give(w.lease, w.gpus);
      w.gpus.clear();
      w.leased = w.reserve = false;
      w.lease = resource_set{};
    }
  }

  void count_end(const task_ptr& t, size_t worker) {
    if (t->phase() != task_phase::finished) return; // queued again to retry, or cancelled
    auto& c = functions.ended(*t).counts;
    bool failed = t->result->current() == detail::object_slot::state::failed;
    ++(failed ? c.failed : c.finished);
    bool timed = config.timeline_events > 0 && t->started_us != 0;
    if (!failed && !timed) return;
    task_event e{
        t->result->id(), t->name,       failed,      static_cast<uint32_t>(worker),
        t->queued_us,    t->started_us, t->ended_us, {}};
    if (failed) {
      e.error = t->result->read().err().to_string();
      if (failures.size() == failures_kept) failures.pop_front();
      failures.push_back(e);
    }
    if (!timed) return;
    if (timeline.size() == config.timeline_events) timeline.pop_front();
    timeline.push_back(std::move(e));
  }

  void on_done(size_t index, const task_ptr& t) {
    count_end(t, index);
    ++ended_since_trim;
    if (index >= workers.size()) return;
    auto& w = workers[index];
    auto i = std::find(w.inflight.begin(), w.inflight.end(), t);
    if (i != w.inflight.end()) w.inflight.erase(i);
    release_if_idle(w);
    dispatch_ready(); // may start a worker: `w` may have moved
    if (auto& now = workers[index]; !now.leased && !now.blocked) steal();
    trim_when_idle();
  }

  // A worker fell idle with nothing ready that fits: the oldest task that has waited
  // `steal_after`, not started, behind a running one on the busiest other worker comes
  // back to run here (its dispatch there is stale from now on): a task pipelined behind
  // one that runs long does not wait for it while a worker idles.
  void steal() {
    worker_slot* from = nullptr;
    task_ptr oldest;
    size_t most = 0;
    auto waited_since = now_us() - config.steal_after.count();
    for (auto& w : workers) {
      if (w.blocked || w.inflight.size() < 2) continue;
      auto waiting = std::find_if(w.inflight.begin() + 1, w.inflight.end(), [&](auto& x) {
        return x->phase() == task_phase::queued && x->queued_us <= waited_since;
      });
      if (waiting == w.inflight.end() || !fits_now((*waiting)->options.resources))
        continue;
      auto count = static_cast<size_t>(w.inflight.end() - waiting);
      if (count > most) {
        most = count;
        from = &w;
        oldest = *waiting;
      }
    }
    if (!from || !oldest->requeue()) return;
    from->inflight.erase(std::find(from->inflight.begin(), from->inflight.end(), oldest));
    ready[oldest->options.priority].push_front(std::move(oldest));
    dispatch_ready();
  }

  void on_blocked(size_t index) {
    if (index >= workers.size() || workers[index].blocked) return;
    auto& w = workers[index];
    // Everything behind the blocked task goes back to the queue, in order: it may be
    // exactly what the blocked task waits for.
    std::deque<task_ptr> keep;
    for (size_t k = 0; k < w.inflight.size(); ++k) {
      auto& t = w.inflight[k];
      if (k > 0 && t->requeue())
        requeue_front(t, k);
      else
        keep.push_back(t);
    }
    w.inflight.swap(keep);
    w.blocked = true;
    if (w.leased) give(w.lease, w.gpus); // its task keeps the shares, to hold them again
    dispatch_ready();
  }

  void requeue_front(const task_ptr& t, size_t order) {
    auto& q = ready[t->options.priority];
    // Tasks of one blocked worker are put back ahead of newer work, keeping their order.
    q.insert(q.begin() + static_cast<std::ptrdiff_t>(std::min(order - 1, q.size())), t);
  }

  void on_unblocked(size_t index) {
    if (index >= workers.size() || !workers[index].blocked) return;
    auto& w = workers[index];
    w.blocked = false;
    if (w.leased) { // may briefly oversubscribe, as a task resumes
      available -= w.lease;
      gpus.hold(w.gpus);
    }
    release_if_idle(w);
  }

  void on_worker_down(const caf::down_msg& dm) {
    for (size_t index = 0; index < workers.size(); ++index) {
      auto& w = workers[index];
      if (w.handle.address() != dm.source) continue;
      auto lost = std::move(w.inflight);
      if (w.leased && !w.blocked) give(w.lease, w.gpus);
      for (auto& t : lost) {
        auto phase = t->phase();
        if (phase == task_phase::running) {
          if (t->attempts < t->options.max_retries) {
            ++t->attempts;
            t->claim.store(make_claim(t->epoch() + 1, task_phase::queued));
            ready[t->options.priority].push_back(t);
          } else {
            t->claim.store(make_claim(t->epoch(), task_phase::finished));
            ++count_of(t).failed;
            t->result->set_error(
                {errc::worker_died, "worker running task '" + t->name + "' died (" +
                                        caf::to_string(dm.reason) + ") and " +
                                        std::to_string(t->options.max_retries) +
                                        " retries are used up"});
          }
        } else if (t->requeue()) {
          ready[t->options.priority].push_back(t);
        }
      }
      start_worker(index);
      dispatch_ready();
      return;
    }
  }

  // Queues `t`, counted as submitted at its first attempt.
  void enqueue(task_ptr t) {
    if (t->attempts == 0) {
      ++count_of(t).submitted;
      t->queued_us = now_us();
    }
    arrived(*t);
    ready[t->options.priority].push_back(std::move(t));
  }

  void drain_inbox() {
    for (auto& t : config.inbox->drain())
      if (t->phase() == task_phase::queued) enqueue(std::move(t));
    dispatch_ready();
  }

  void on_submit(task_ptr t) {
    if (t->phase() != task_phase::queued) return;
    enqueue(std::move(t));
    dispatch_ready();
  }

  // Runs `f(task, at_worker)` on every task held: at a worker (next, or running), then
  // queued here.
  template <class F> void each_task(F f) const {
    for (auto& w : workers)
      for (auto& t : w.inflight)
        f(t, true);
    for (auto& [p, q] : ready)
      for (auto& t : q)
        f(t, false);
  }

  // Cancels the task making `result`: one that has not started (queued here, or at a
  // worker next) fails with `cancelled`; a running one is asked to stop (it sees it
  // through its context) and fails so when it returns.
  void cancel(const object_id& result) {
    each_task([&](const task_ptr& t, bool) {
      if (t->result->id() == result) t->cancel();
    });
  }

  uint64_t cancel_others(uint64_t first, uint64_t last) {
    uint64_t n = 0;
    each_task([&](const task_ptr& t, bool) {
      auto owner = t->result->id().owner;
      if ((owner < first || owner > last) && t->cancel()) ++n;
    });
    return n;
  }

  std::vector<task_row> rows() const {
    std::vector<task_row> out;
    each_task([&](const task_ptr& t, bool at_worker) {
      auto state = !at_worker                          ? "queued"
                   : t->phase() == task_phase::running ? "running"
                                                       : "dispatched";
      out.push_back({t->result->id().to_string(), t->name, state, t->options.priority,
                     t->attempts + 1});
    });
    return out;
  }

  function_counts& count_of(const task_ptr& t) { return functions.of(*t).counts; }

  counts_by_function counts_now() const {
    auto out = functions.counts();
    for (auto& w : workers)
      for (auto& t : w.inflight)
        if (t->phase() == task_phase::running) ++out[t->name].running;
    return out;
  }
};

caf::behavior local_scheduler(caf::stateful_actor<scheduler_state>* self,
                              scheduler_config cfg) {
  auto& st = self->state;
  st.self = self;
  st.config = cfg;
  st.available = cfg.total;
  st.gpus = gpu_slots{cfg.total.get("GPU")};
  for (size_t i = 0; i < cfg.initial_workers; ++i)
    st.start_worker(i);
  self->set_down_handler([self](caf::down_msg& dm) { self->state.on_worker_down(dm); });
  st.drain_inbox();
  return {
      [self](wake_atom) { self->state.drain_inbox(); },
      [self](submit_atom, task_ptr& t) { self->state.on_submit(std::move(t)); },
      [self](done_atom, size_t index, task_ptr& t) { self->state.on_done(index, t); },
      [self](trim_atom) { self->state.on_trim(); },
      [self](blocked_atom, size_t index) { self->state.on_blocked(index); },
      [self](unblocked_atom, size_t index) { self->state.on_unblocked(index); },
      [self](stats_atom, by_function_atom) { return self->state.counts_now(); },
      [self](stats_atom, list_atom) { return self->state.rows(); },
      [self](stats_atom, timeline_atom) {
        return std::vector<task_event>(self->state.timeline.begin(),
                                       self->state.timeline.end());
      },
      [self](stats_atom, failures_atom) {
        return std::vector<task_event>(self->state.failures.begin(),
                                       self->state.failures.end());
      },
      [self](stats_atom) { return self->state.load(); },
      [self](gpu_hold_atom, uint64_t actor, double gpu, double memory) {
        resource_set demand;
        demand.set("GPU", gpu);
        if (memory > 0) demand.set("gpu_memory", memory);
        return self->state.hold(actor, std::move(demand));
      },
      [self](gpu_unhold_atom, uint64_t actor) { self->state.unhold(actor); },
      [=](cancel_atom, uint64_t owner, uint64_t seq) {
        self->state.cancel(object_id{owner, seq});
      },
      [=](cancel_atom, others_atom, uint64_t first, uint64_t last) {
        return self->state.cancel_others(first, last);
      },
  };
}

} // namespace

caf::actor spawn_local_scheduler(caf::actor_system& sys, const scheduler_config& cfg) {
  return sys.spawn(local_scheduler, cfg);
}

} // namespace swarm::actors
