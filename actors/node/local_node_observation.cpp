#include "actors/node/local_node.hpp"

#include <caf/all.hpp>

#include <map>
#include <vector>

#include "actors/control_store/gcs_shard.hpp"
#include "actors/scheduling/local_scheduler.hpp"
#include "actors/scheduling/protocol.hpp"
#include "actors/workers/gpu_worker.hpp"
#include "framework/cluster.hpp"
#include "gpu/device_api.hpp"

namespace swarm::actors {

// What a node tells of itself: its numbers, its lists of tasks, actors and objects, and
// its metrics.

namespace {

// How long each actor may take to hand over its recent calls for the timeline.
constexpr auto timeline_ask_timeout = std::chrono::seconds(1);
// How long each GPU worker may take to give its numbers to a scrape.
constexpr auto device_ask_timeout = std::chrono::seconds(1);
// How long the scheduler may take to give its lists.
constexpr auto list_ask_timeout = std::chrono::seconds(10);

} // namespace

node_stats local_node::stats() {
  node_stats out;
  auto s = store_->stats();
  out.store_objects = s.objects;
  out.store_bytes = s.bytes;
  out.pulled_bytes = s.secondary_bytes;
  out.store_capacity = s.capacity;
  out.store_rejected = s.rejected;
  out.store_pooled_bytes = s.pooled_bytes;
  out.store_pool_reuses = s.pool_reuses;
  out.spilled_objects = s.spilled_objects;
  out.spilled_bytes = s.spilled_bytes;
  out.spills = s.spills;
  out.restores = s.restores;
  out.cached_bytes = s.cached_bytes;
  out.cache_hits = s.cache_hits;
  out.cache_misses = s.cache_misses;
  out.evictions = s.evictions;
  caf::scoped_actor self{*sys_};
  self->request(current(part::scheduler), request_timeout, stats_atom::value)
      .receive(
          [&](const scheduler_load& load) {
            out.running_tasks = load.running;
            out.queued_tasks = load.queued;
            out.dispatched_tasks = load.dispatched;
            out.workers = load.workers;
            out.blocked_workers = load.blocked;
            out.available = load.available.to_string();
          },
          [](caf::error&) {});
  gcs_->add_stats(out.named_actors, out.control_rows);
  return out;
}

namespace {

// What the scheduler `scheduler` answers to (stats_atom, `what`); an error naming node
// `node` when it does not answer.
template <class T, class Atom>
result<T> ask_scheduler(caf::actor_system& sys, const caf::actor& scheduler,
                        const std::string& node, Atom what) {
  caf::scoped_actor self{sys};
  result<T> out =
      error{errc::timeout, "node '" + node + "': its scheduler did not answer"};
  self->request(scheduler, list_ask_timeout, stats_atom::value, what)
      .receive([&](T& got) { out = std::move(got); },
               [&](caf::error& e) {
                 out = error{errc::timeout,
                             "node '" + node +
                                 "': its scheduler did not answer: " + caf::to_string(e)};
               });
  return out;
}

} // namespace

result<std::vector<wire_msg::list_row>> local_node::list(const std::string& what) {
  std::vector<wire_msg::list_row> out;
  if (what == "tasks") {
    auto rows = ask_scheduler<std::vector<task_row>>(*sys_, current(part::scheduler),
                                                     node_name(), list_atom::value);
    if (!rows) return rows.err();
    for (auto& r : *rows)
      out.push_back({r.id,
                     r.function,
                     r.state,
                     "priority " + std::to_string(r.priority) + ", attempt " +
                         std::to_string(r.attempt),
                     {}});
  } else if (what == "timeline") {
    auto events = ask_scheduler<std::vector<task_event>>(
        *sys_, current(part::scheduler), node_name(), timeline_atom::value);
    if (!events) return events.err();
    for (auto& e : *events)
      out.push_back({e.id.to_string(),
                     e.function,
                     e.failed ? "failed" : "finished",
                     "worker " + std::to_string(e.worker),
                     {timeline_kind::task, e.queued_us, e.started_us, e.ended_us, 0}});
    add_actor_calls(out);
  } else if (what == "failures") {
    auto events = ask_scheduler<std::vector<task_event>>(
        *sys_, current(part::scheduler), node_name(), failures_atom::value);
    if (!events) return events.err();
    // Newest first: what a reader looks for.
    for (auto e = events->rbegin(); e != events->rend(); ++e)
      out.push_back({e->id.to_string(), e->function, "failed", e->error, {e->ended_us}});
  } else if (what == "summary") {
    auto counts = ask_scheduler<counts_by_function>(*sys_, current(part::scheduler),
                                                    node_name(), by_function_atom::value);
    if (!counts) return counts.err();
    for (auto& [fn, c] : *counts)
      out.push_back({"function",
                     fn,
                     "",
                     "",
                     {static_cast<int64_t>(c.submitted), static_cast<int64_t>(c.running),
                      static_cast<int64_t>(c.finished), static_cast<int64_t>(c.failed)}});
    int64_t alive = 0, dead = 0;
    {
      std::lock_guard<std::mutex> guard{hosts_mtx_};
      for (auto& weak : hosts_)
        if (auto h = weak.lock()) ++(h->dead() ? dead : alive);
    }
    out.push_back({"actors", "", "", "", {alive, dead}});
    auto s = stats();
    out.push_back(
        {"objects",
         "",
         "",
         "",
         {static_cast<int64_t>(s.store_objects), static_cast<int64_t>(s.store_bytes),
          static_cast<int64_t>(s.pulled_bytes)}});
  } else if (what == "logs") {
    for (auto& line : log_.recent())
      out.push_back({"", "", "", line, {}});
  } else if (what == "actors") {
    std::lock_guard<std::mutex> guard{hosts_mtx_};
    for (auto& weak : hosts_)
      if (auto h = weak.lock()) {
        auto& spec = h->spec();
        out.push_back({spec.name(),
                       spec.type_name,
                       h->dead() ? "dead" : "alive",
                       h->dead() ? h->death_reason() : "",
                       {}});
      }
  } else if (what == "objects") {
    for (auto& [id, bytes, spilled] : store_->objects())
      out.push_back(
          {id.to_string(), "", spilled ? "spilled" : "stored", human_bytes(bytes), {}});
  } else {
    return error{errc::invalid_argument,
                 "cannot list '" + what +
                     "': lists are tasks, actors, objects, timeline, logs, summary and "
                     "failures"};
  }
  return out;
}

void local_node::add_actor_calls(std::vector<wire_msg::list_row>& out) {
  struct asked {
    std::string track, type;
    caf::actor host;
  };
  std::vector<asked> hosts;
  {
    std::lock_guard<std::mutex> guard{hosts_mtx_};
    for (auto& weak : hosts_)
      if (auto h = weak.lock(); h && !h->dead())
        if (auto a = h->host()) {
          auto& spec = h->spec();
          hosts.push_back({"actor " + spec.name(), spec.type_name, std::move(a)});
        }
  }
  // All asked at once: a host busy in a long call (or gone) costs one timeout, not one
  // each, and is left out.
  caf::scoped_actor self{*sys_};
  using reply = decltype(self->request(caf::actor{}, timeline_ask_timeout,
                                       stats_atom::value, timeline_atom::value));
  std::vector<reply> replies;
  for (auto& h : hosts)
    replies.push_back(self->request(h.host, timeline_ask_timeout, stats_atom::value,
                                    timeline_atom::value));
  for (size_t i = 0; i < hosts.size(); ++i)
    replies[i].receive(
        [&](std::vector<call_event>& calls) {
          for (auto& c : calls)
            out.push_back(
                {c.id.to_string(),
                 c.method.empty() ? hosts[i].type : hosts[i].type + "." + c.method,
                 c.failed ? "failed" : "finished",
                 hosts[i].track,
                 {timeline_kind::actor_call, 0, c.started_us, c.ended_us, 0}});
        },
        [](caf::error&) {});
}

void local_node::collect(metric_set& out) {
  auto s = stats();
  struct number {
    bool counter;
    const char* name;
    const char* help;
    size_t value;
  };
  const number numbers[] = {
      {false, "swarm_tasks_queued", "Tasks ready to run, waiting for a worker",
       s.queued_tasks},
      {false, "swarm_tasks_dispatched", "Tasks at workers, running or next",
       s.dispatched_tasks},
      {false, "swarm_workers", "Task workers started", s.workers},
      {false, "swarm_workers_blocked", "Workers whose task waits in get or wait",
       s.blocked_workers},
      {false, "swarm_store_objects", "Objects in the object store", s.store_objects},
      {false, "swarm_store_bytes", "Bytes in the object store, pulled copies included",
       s.store_bytes},
      {false, "swarm_store_capacity_bytes", "The object store's limit", s.store_capacity},
      {false, "swarm_store_pulled_bytes", "Bytes of copies pulled from other nodes",
       s.pulled_bytes},
      {false, "swarm_store_pooled_bytes", "Memory of freed values kept for new ones",
       s.store_pooled_bytes},
      {true, "swarm_store_rejected_total", "Puts and results refused for lack of room",
       s.store_rejected},
      {true, "swarm_store_pool_reuses_total", "Values made in kept memory",
       s.store_pool_reuses},
      {false, "swarm_store_spilled_objects", "Objects on disk only", s.spilled_objects},
      {false, "swarm_store_spilled_bytes", "Bytes of spill files", s.spilled_bytes},
      {true, "swarm_store_spills_total", "Objects moved from memory to disk", s.spills},
      {true, "swarm_store_restores_total", "Spilled objects read back into memory",
       s.restores},
      {false, "swarm_store_cached_bytes",
       "Copies of other nodes' objects kept after reads", s.cached_bytes},
      {true, "swarm_store_cache_hits_total", "Reads of other nodes' objects found here",
       s.cache_hits},
      {true, "swarm_store_cache_misses_total", "Reads of other nodes' objects pulled",
       s.cache_misses},
      {true, "swarm_store_evictions_total", "Kept copies dropped to make room",
       s.evictions},
      {false, "swarm_named_actors", "Actor names in the control store", s.named_actors},
      {false, "swarm_control_rows", "Rows in the control store's tables", s.control_rows},
  };
  auto emit = [&out](const auto& rows, const metric_set::labels& labels) {
    for (auto& n : rows)
      (out.*(n.counter ? &metric_set::counter : &metric_set::gauge))(
          n.name, n.help, static_cast<double>(n.value), labels);
  };
  emit(numbers, {});
  if (devices_)
    for (auto& u : devices_->usages(device_ask_timeout)) {
      const number per_device[] = {
          {false, "swarm_gpu_up", "Whether the device's GPU worker runs",
           u.running ? size_t{1} : size_t{0}},
          {false, "swarm_gpu_memory_used_bytes", "Device memory of live buffers", u.used},
          {false, "swarm_gpu_memory_cached_bytes", "Freed device memory kept for reuse",
           u.cached},
          {false, "swarm_gpu_memory_capacity_bytes", "Device memory the worker hands out",
           u.capacity},
          {false, "swarm_gpu_allocations_waiting",
           "Allocations waiting for device memory", u.waiting},
          {true, "swarm_gpu_worker_restarts_total",
           "Restarts of the device's GPU worker after faults", u.restarts},
      };
      emit(per_device, {{"device", std::to_string(u.device)},
                        {"uuid", u.uuid},
                        {"backend", devices_->backend()}});
    }
  // Actor calls by actor type, across restarts, of the actors alive here.
  std::map<std::string, call_histogram::snapshot> calls;
  {
    std::lock_guard<std::mutex> guard{hosts_mtx_};
    for (auto& weak : hosts_)
      if (auto h = weak.lock()) calls[h->spec().type_name] += h->timing()->read();
  }
  const std::vector<double> bounds(call_histogram::bounds.begin(),
                                   call_histogram::bounds.end());
  for (auto& [type, c] : calls)
    out.histogram("swarm_actor_call_seconds", "How long actor calls ran, by actor type",
                  bounds, std::vector<uint64_t>(c.counts.begin(), c.counts.end()),
                  c.sum_seconds, metric_set::labels{{"type", type}});
  auto counts = ask_scheduler<counts_by_function>(*sys_, current(part::scheduler),
                                                  node_name(), by_function_atom::value);
  if (!counts) return; // the scrape shows the rest
  for (auto& [fn, c] : *counts) {
    metric_set::labels l{{"function", fn}};
    out.counter("swarm_tasks_submitted_total", "Tasks queued on this node",
                static_cast<double>(c.submitted), l);
    out.gauge("swarm_tasks_running", "Tasks running on a worker now",
              static_cast<double>(c.running), l);
    out.counter("swarm_tasks_finished_total", "Tasks that ended with a value",
                static_cast<double>(c.finished), l);
    out.counter("swarm_tasks_failed_total", "Tasks that ended with an error",
                static_cast<double>(c.failed), l);
  }
}

} // namespace swarm::actors
