#include "actors/node/cluster_tasks.hpp"
#include "actors/scheduling/global_scheduler.hpp"
#include "actors/scheduling/spill_policy.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <functional>
#include <optional>

#include "framework/detail/wire_convert.hpp"

namespace swarm::actors {

namespace {

using detail::from_list;
using detail::from_wire;
using detail::key_of;
using detail::to_list;
using detail::to_wire;

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

cluster_tasks::cluster_tasks(node_link& link,
                             std::function<void(wire_msg::message)> publish)
    : link_(link), publish_(std::move(publish)),
      spill_threshold_(static_cast<size_t>(2 * link.local->total_resources().get("CPU")) +
                       1),
      spill_draws_(std::hash<std::string>{}(link.self.name)) {}

void cluster_tasks::on_submit(wire_msg::task_submit m) {
  if (m.placed || !link_.is_head())
    run_task_here(std::move(m));
  else
    place_and_forward(std::move(m));
}

result<void> cluster_tasks::feasible(const resource_set& demand, const std::string& node,
                                     const std::string& function) {
  // Only the head's table is complete: a node that joined a moment ago may be missing
  // from this node's copy. Elsewhere, work not pinned to a node goes where this node
  // spills it, or to the head, whose scheduler gives the verdict.
  if (node.empty() && !link_.is_head()) return {};
  std::string seen, dead, lacking;
  auto peers = link_.members.get();
  auto needs = work_needs::function(function);
  for (auto& [name, p] : *peers) {
    if (!node.empty() && name != node) continue;
    if (!registered(p.info, needs)) {
      add_quoted(lacking, name);
      continue;
    }
    auto total = from_list(p.info.total);
    bool fits = total && demand.fits_in(*total);
    if (p.info.alive && fits) return {};
    if (fits) add_quoted(dead, name);
    seen += (seen.empty() ? "" : ", ") + name + " " + (total ? total->to_string() : "?");
  }
  // The head's autoscaler may start a node it fits: the global scheduler holds it.
  if (node.empty() && std::any_of(link_.cfg.autoscaler.node_types.begin(),
                                  link_.cfg.autoscaler.node_types.end(), [&](auto& t) {
                                    return t.max > 0 && demand.fits_in(t.total());
                                  }))
    return {};
  if (!dead.empty())
    return node.empty() ? only_dead_nodes_fit(demand, dead)
                        : error{errc::node_unreachable, "node " + dead + " is dead"};
  if (seen.empty() && !lacking.empty())
    return error{errc::unregistered,
                 node.empty() ? "no node of the cluster can run " + needs.to_string() +
                                    ": it is not registered on " + lacking
                              : "node '" + node + "' cannot run " + needs.to_string() +
                                    ": it is not registered there"};
  if (!node.empty() && seen.empty()) {
    if (!link_.cfg.find(node))
      return error{errc::infeasible, link_.cfg.find(node).err().message};
    return {}; // a node of the file that has not joined yet: the work waits for it
  }
  if (!lacking.empty())
    return error{errc::infeasible, "demands " + demand.to_string() +
                                       " but no node that registered " +
                                       needs.to_string() + " has it (" + seen +
                                       "), and it is not registered on " + lacking};
  return error{errc::infeasible, "demands " + demand.to_string() +
                                     " but no node of the cluster has it (" + seen + ")"};
}

void cluster_tasks::submit(detail::task_ptr task) {
  const auto& opts = task->options;
  if (!opts.node.empty() && opts.node != link_.self.name)
    return send_task(std::move(task), opts.node, true);
  if (opts.node.empty() && opts.redundancy > 1)
    if (auto nodes = nodes_for(*task, opts.redundancy); nodes.size() > 1)
      return send_copies(std::move(task), std::move(nodes));
  if (opts.node.empty()) {
    // A client's tasks run on the cluster.
    bool fits_here =
        !link_.self.client && opts.resources.fits_in(link_.local->total_resources());
    // Large inputs held elsewhere pull the task towards them.
    bool inputs_elsewhere = false;
    for (auto& a : task->args)
      if (a.ref)
        if (auto where = a.ref->primary_copy())
          inputs_elsewhere |= where->node != link_.self.name;
    // Bottom-up: a busy node spills what it cannot start soon, when another node can.
    bool busy = local_inflight_.load(std::memory_order_relaxed) >= spill_threshold_ &&
                idle_elsewhere();
    // On the head, a run again after a node loss goes where its global scheduler places
    // it: the lost node's tasks come back all at once, and would all queue here.
    bool again = task->attempts > 0 && link_.is_head();
    if (!fits_here || inputs_elsewhere || busy || again) {
      if (link_.is_head()) return send_task(std::move(task), {}, false);
      std::optional<spill_candidate> here;
      if (fits_here) {
        here.emplace();
        here->name = link_.self.name;
        here->ahead = local_inflight_.load(std::memory_order_relaxed);
        here->room = here->ahead < spill_threshold_;
      }
      return spill(std::move(task), std::move(here));
    }
  }
  run_locally(std::move(task));
}

void cluster_tasks::spill(detail::task_ptr task, std::optional<spill_candidate> here) {
  std::vector<object_key> exported;
  auto m = submit_message(*task, true, exported);
  // A run again (its node was lost, or gave it back as it stopped) is the head's to
  // place: only its table knows which nodes are leaving.
  auto to = task->attempts > 0 ? std::string{} : spill_target(*task, m.args, here);
  if (here && to == here->name) {
    link_.release_exports(exported);
    return run_locally(std::move(task));
  }
  // None this node knows of: the head's scheduler, which knows every node, decides.
  if (to.empty()) {
    m.placed = false;
    to = link_.head_name();
  }
  forward_task(std::move(task), to, std::move(m), std::move(exported));
}

std::string cluster_tasks::spill_target(const detail::task_spec& task,
                                        const std::vector<wire_msg::arg>& args,
                                        const std::optional<spill_candidate>& here) {
  auto needs = work_needs::function(task.name);
  auto& demand = task.options.resources;
  auto peers = link_.members.loads();
  auto marks = marks_for(peers);
  // What could run it, as this node last heard; one not connected yet is dialled by the
  // send.
  auto weigh = [&](const std::string& name,
                   const peer_view& p) -> std::optional<spill_candidate> {
    if (name == link_.self.name || !p.info.alive || p.info.leaving || p.info.client ||
        !registered(p.info, needs))
      return std::nullopt;
    auto total = from_list(p.info.total);
    if (!total || !demand.fits_in(*total)) return std::nullopt;
    spill_candidate c;
    c.name = name;
    auto available = from_list(p.info.available);
    uint32_t sent = 0;
    if (auto s = marks->sent.find(name); s != marks->sent.end())
      sent = s->second.load(std::memory_order_relaxed);
    // Room for this task besides those spilled there since the view was published.
    c.room = static_cast<bool>(available);
    for (uint32_t k = 0; c.room && k <= sent; ++k) {
      c.room = demand.fits_in(*available);
      *available -= demand;
    }
    c.ahead = sent;
    for (auto& a : args)
      if (auto* r = std::get_if<wire_msg::remote_ref>(&a); r && r->node == name)
        c.input_bytes += r->size;
    c.ahead += work_ahead(p.info.queued, p.info.by_priority, task.options.priority);
    return c;
  };
  std::vector<spill_candidate> weighed;
  if (here) weighed.push_back(*here);
  std::vector<std::string> seen; // each node weighed once
  auto weigh_once = [&](const std::string& name,
                        const peer_view& p) -> std::optional<spill_candidate> {
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) return std::nullopt;
    seen.push_back(name);
    return weigh(name, p);
  };
  // The nodes holding its inputs, then a few drawn at random, and more (up to
  // `spill_probes`) while none of them has room: the cost of a spill does not grow with
  // the cluster.
  for (auto& a : args)
    if (auto* r = std::get_if<wire_msg::remote_ref>(&a))
      if (auto i = peers->find(r->node); i != peers->end())
        if (auto c = weigh_once(i->first, i->second)) weighed.push_back(std::move(*c));
  std::vector<const peer_table::value_type*> live;
  live.reserve(peers->size());
  for (auto& row : *peers)
    if (row.second.info.alive && !row.second.info.client) live.push_back(&row);
  draw_spill_candidates(
      spill_draw{live.size(), spill_draws_.fetch_add(1, std::memory_order_relaxed)},
      spill_sample, spill_probes, weighed,
      [&](size_t i) { return weigh_once(live[i]->first, live[i]->second); });
  // A node with room, else (the cluster is full as far as this node sees) the least busy
  // of those weighed, this one included when the task fits here: the work waits there
  // (Ray's hybrid policy). The head's scheduler decides only when none weighed could run
  // it: work few nodes can run, which the draws missed.
  auto to = best_spill_target(weighed);
  if (!to.empty())
    if (auto s = marks->sent.find(to); s != marks->sent.end())
      s->second.fetch_add(1, std::memory_order_relaxed);
  return to;
}

std::shared_ptr<cluster_tasks::spill_marks>
cluster_tasks::marks_for(const std::shared_ptr<const peer_table>& view) {
  auto marks = std::atomic_load(&marks_);
  if (marks && marks->view == view) return marks;
  auto fresh = std::make_shared<spill_marks>();
  fresh->view = view;
  for (auto& row : *view)
    fresh->sent.try_emplace(row.first, 0);
  if (std::atomic_compare_exchange_strong(&marks_, &marks, fresh)) return fresh;
  // Another thread made them first (for this view, or a newer one).
  return marks->view == view ? marks : fresh;
}

void cluster_tasks::run_locally(detail::task_ptr task) {
  count_until_done(*task->result);
  std::weak_ptr<detail::object_slot> result = task->result;
  if (auto copies = task->options.replicas; copies > 1)
    task->result->when_done([this, result, copies] {
      if (auto slot = result.lock()) link_.replicate(slot, copies);
    });
  link_.local->submit(std::move(task));
}

void cluster_tasks::count_until_done(detail::object_slot& result) {
  local_inflight_.fetch_add(1, std::memory_order_relaxed);
  result.when_done([this] { local_inflight_.fetch_sub(1, std::memory_order_relaxed); });
}

bool cluster_tasks::idle_elsewhere() const {
  auto peers = link_.members.loads();
  for (auto& [name, p] : *peers) {
    if (name == link_.self.name || !p.info.alive) continue;
    double cpus = 0;
    for (auto& [r, amount] : p.info.total)
      if (r == "CPU") cpus = amount;
    if (static_cast<double>(p.info.queued) < cpus) return true;
  }
  return false;
}

wire_msg::task_submit cluster_tasks::submit_message(const detail::task_spec& task,
                                                    bool placed,
                                                    std::vector<key>& exported) {
  wire_msg::task_submit m;
  m.function = task.name;
  m.result = to_wire(task.result->id());
  m.resources = to_list(task.options.resources);
  m.max_retries = task.options.max_retries;
  m.retry_exceptions = task.options.retry_exceptions;
  m.priority = task.options.priority;
  // Copies of a task run on several nodes are not replicated: each would free the
  // others' replicas as it is dropped.
  m.replicas = task.options.redundancy > 1 ? 1 : task.options.replicas;
  m.owner_node = link_.self.name;
  m.placed = placed;
  m.latency_critical = task.options.latency_critical;
  m.job = task.options.job;
  m.job_share = task.options.job_share;
  m.avoid = task.lost_on;
  if (task.reader) {
    m.stream_owner = task.reader->items_owner();
    m.stream_window = static_cast<uint32_t>(task.reader->window());
  }
  for (auto& a : task.args)
    m.args.push_back(link_.export_arg(a, exported));
  return m;
}

void cluster_tasks::send_task(detail::task_ptr task, const std::string& to, bool placed) {
  std::vector<object_key> exported;
  auto m = submit_message(*task, placed, exported);
  if (!to.empty())
    return forward_task(std::move(task), to, std::move(m), std::move(exported));
  // This is the head: its global scheduler places it.
  auto demand = task->options.resources;
  auto args = m.args; // `m` moves into the continuation below
  link_.place(demand, work_needs::function(task->name), args, task->options.priority,
              [this, task, m = std::move(m),
               exported = std::move(exported)](result<std::string> where) mutable {
                if (!where || *where == link_.self.name) {
                  link_.release_exports(exported);
                  if (!where)
                    task->result->set_error(where.err());
                  else
                    run_locally(std::move(task));
                  return;
                }
                m.placed = true;
                forward_task(std::move(task), *where, std::move(m), std::move(exported));
              });
}

std::vector<std::string> cluster_tasks::nodes_for(const detail::task_spec& task,
                                                  size_t n) const {
  auto needs = work_needs::function(task.name);
  return least_busy(*link_.members.loads(), link_.self.name, n, [&](const peer_view& p) {
    auto total = from_list(p.info.total);
    return registered(p.info, needs) && total && task.options.resources.fits_in(*total);
  });
}

void cluster_tasks::send_copies(detail::task_ptr task, std::vector<std::string> nodes) {
  std::vector<object_key> exported;
  auto m = submit_message(*task, true, exported);
  auto first = nodes.front();
  nodes.erase(nodes.begin());
  link_.owner.track(
      {std::move(task), first, std::move(exported), nullptr, std::move(nodes)}, first,
      std::move(m));
}

void cluster_tasks::forward_task(detail::task_ptr task, const std::string& to,
                                 wire_msg::task_submit m, std::vector<key> exported) {
  link_.owner.track({std::move(task), to, std::move(exported), nullptr}, to,
                    std::move(m));
}

void cluster_tasks::place_and_forward(wire_msg::task_submit m) {
  auto demand = from_list(m.resources);
  if (!demand)
    return link_.send_to(m.owner_node,
                         wire_msg::task_result{m.result, to_wire(demand.err())});
  auto args = m.args;
  auto needs = work_needs::function(m.function);
  auto priority = m.priority;
  auto avoid = m.avoid;
  link_.place(
      *demand, std::move(needs), args, priority,
      [this, m = std::move(m)](result<std::string> where) mutable {
        if (!where)
          return link_.send_to(m.owner_node,
                               wire_msg::task_result{m.result, to_wire(where.err())});
        m.placed = true;
        if (*where == link_.self.name) return run_task_here(std::move(m));
        // Its owner follows it there: the loss of that node (this life of it) runs it
        // again.
        if (m.owner_node != *where)
          link_.send_to(
              m.owner_node,
              wire_msg::task_placed{m.result, *where, link_.incarnation_of(*where)});
        link_.send_to(*where, std::move(m));
      },
      std::move(avoid));
}

void cluster_tasks::run_task_here(wire_msg::task_submit m) {
  auto fail = [this, &m](error e) {
    link_.send_to(m.owner_node, wire_msg::task_result{
                                    m.result, to_wire(link_.named_here(std::move(e)))});
  };
  auto entry = link_.local->app().find_entry(m.function);
  if (!entry)
    return fail({entry.err().code, "node '" + link_.self.name + "' cannot run task '" +
                                       m.function + "': " + entry.err().message});
  auto demand = from_list(m.resources);
  if (!demand) return fail(demand.err());
  if ((m.stream_owner != 0) != ((*entry)->stream_item != nullptr))
    return fail({errc::type_mismatch,
                 "task '" + m.function + "' is " +
                     ((*entry)->stream_item ? "a streaming function here, but the owner "
                                              "did not ask for a stream"
                                            : "no streaming function here, but the owner "
                                              "asked for a stream")});
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
  opts.replicas = m.replicas;
  opts.stream_window = m.stream_window;
  opts.latency_critical = m.latency_critical;
  opts.job = m.job;
  opts.job_share = m.job_share > 0 ? m.job_share : 1;
  auto stream_owner = m.stream_owner;
  link_.gather_args(m.args, f->params, pull_weight(opts.priority, opts.job_share),
                    [this, f, owner, id, opts,
                     stream_owner](result<std::vector<detail::boxed_value>> args) {
                      auto t =
                          link_.incoming(f->name, &f->fn, f->params, f->result, id, owner,
                                         args, opts.replicas, opts.latency_critical);
                      if (!t) return;
                      t->options = opts;
                      if (stream_owner != 0)
                        t->stream =
                            link_.stream_to(owner, id, stream_owner, opts.stream_window);
                      t->result->set_producer(t);
                      count_until_done(*t->result);
                      link_.local->submit(std::move(t));
                    });
}

void cluster_tasks::pull_result(detail::task_ptr task, const wire_msg::stored_at& where) {
  // The callback keeps the task, its lineage: when the node holding the result dies
  // before this copy is complete, the owner runs the task again (its inputs are here).
  auto slot = task->result;
  auto type = task->result_type;
  // Weighted as the task's arguments were: the driver's `get` of a result of higher
  // priority, or of a job with a larger share, takes more of the link.
  auto weight = pull_weight(task->options.priority, task->options.job_share);
  pull_into(slot, type, where, weight,
            [owner = link_.owner, task = std::move(task)](error e) {
              if (e.code == errc::object_lost)
                owner.retry(task, "reconstructing its result: " + e.message, e);
              else
                task->result->set_error(std::move(e));
            });
}

void cluster_tasks::pull_item(detail::slot_ptr slot, const detail::type_descriptor* type,
                              const wire_msg::stored_at& where, double weight) {
  std::weak_ptr<detail::object_slot> weak = slot;
  pull_into(std::move(slot), type, where, weight, [weak](error e) {
    if (auto s = weak.lock()) s->set_error(std::move(e));
  });
}

void cluster_tasks::pull_into(const detail::slot_ptr& slot,
                              const detail::type_descriptor* type,
                              const wire_msg::stored_at& where, double weight,
                              std::function<void(error)> failed) {
  // Stays where it was made; this copy is pulled now, the holder keeps the primary (so
  // later tasks reading it run there) until this slot goes.
  auto id = slot->id();
  wire_msg::remote_ref ref{to_wire(id), where.node, where.size, where.replicas};
  auto sink = link_.releases;
  slot->set_location(
      detail::object_slot::location{where.node, where.size, where.replicas});
  caf::anon_send(link_.objects, locate_atom::value,
                 located_object{key_of(id), where.node, slot});
  publish_(wire_msg::object_location{ref.id, where.node, where.size, true});
  auto release = [sink, id, node = where.node, replicas = where.replicas] {
    sink->free_remote(node, id);
    for (auto& r : replicas)
      sink->send(r, wire_msg::object_free{to_wire(id)});
  };
  std::weak_ptr<detail::object_slot> weak = slot;
  link_.fetch(
      ref, type,
      [weak, sink, release, failed = std::move(failed)](result<detail::boxed_value> got) {
        if (!got) {
          release();
          return failed(got.err());
        }
        if (auto s = weak.lock())
          s->set_value(std::move(*got), std::make_unique<remote_hold>(sink, release));
        else
          release();
      },
      weight);
}

} // namespace swarm::actors
