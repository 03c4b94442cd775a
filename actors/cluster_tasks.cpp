// The cluster node's tasks and objects: bottom-up placement, spilling to the head's
// global scheduler, remote execution and results, and pulling objects in chunks.

#include "actors/cluster_node.hpp"
#include "actors/global_scheduler.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <optional>

#include "actors/remote_actor_record.hpp"
#include "framework/detail/wire_convert.hpp"

namespace swarm::actors {

namespace {

using detail::decode;
using detail::encode;
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

// -- scheduling -------------------------------------------------------------------------

result<void> cluster_node::feasible(const resource_set& demand, const std::string& node) {
  std::string seen, dead;
  auto peers = members_.get();
  for (auto& [name, p] : *peers) {
    if (!node.empty() && name != node) continue;
    auto total = from_list(p.info.total);
    bool fits = total && demand.fits_in(*total);
    if (p.info.alive && fits) return {};
    if (fits) add_quoted(dead, name);
    seen += (seen.empty() ? "" : ", ") + name + " " + (total ? total->to_string() : "?");
  }
  if (!dead.empty())
    return node.empty() ? only_dead_nodes_fit(demand, dead)
                        : error{errc::node_unreachable, "node " + dead + " is dead"};
  if (!node.empty() && seen.empty()) {
    if (!cfg_.find(node)) return error{errc::infeasible, cfg_.find(node).err().message};
    return error{errc::infeasible, "node '" + node + "' has not joined the cluster"};
  }
  return error{errc::infeasible, "demands " + demand.to_string() +
                                     " but no node of the cluster has it (" + seen + ")"};
}

void cluster_node::submit(detail::task_ptr task) {
  const auto& opts = task->options;
  if (!opts.node.empty() && opts.node != self_.name)
    return send_task(std::move(task), opts.node, true);
  if (opts.node.empty()) {
    bool fits_here = opts.resources.fits_in(local_->total_resources());
    // Large inputs held elsewhere pull the task towards them.
    bool inputs_elsewhere = false;
    for (auto& a : task->args)
      if (a.ref)
        if (auto where = a.ref->primary_copy()) inputs_elsewhere |= where->node != self_.name;
    // Bottom-up: a busy node spills what it cannot start soon, when another node can.
    bool busy = local_inflight_.load(std::memory_order_relaxed) >= spill_threshold_ &&
                idle_elsewhere();
    if (!fits_here || inputs_elsewhere || busy)
      return send_task(std::move(task), is_head() ? std::string{} : head_name(), false);
  }
  run_locally(std::move(task));
}

void cluster_node::run_locally(detail::task_ptr task) {
  local_inflight_.fetch_add(1, std::memory_order_relaxed);
  task->result->when_done(
      [this] { local_inflight_.fetch_sub(1, std::memory_order_relaxed); });
  local_->submit(std::move(task));
}

bool cluster_node::idle_elsewhere() const {
  auto peers = members_.get();
  for (auto& [name, p] : *peers) {
    if (name == self_.name || !p.info.alive) continue;
    double cpus = 0;
    for (auto& [r, amount] : p.info.total)
      if (r == "CPU") cpus = amount;
    if (static_cast<double>(p.info.queued) < cpus) return true;
  }
  return false;
}

void cluster_node::send_task(detail::task_ptr task, const std::string& to, bool placed) {
  wire_msg::task_submit m;
  m.function = task->name;
  m.result = to_wire(task->result->id());
  m.resources = to_list(task->options.resources);
  m.max_retries = task->options.max_retries;
  m.retry_exceptions = task->options.retry_exceptions;
  m.priority = task->options.priority;
  m.owner_node = self_.name;
  m.placed = placed;
  std::vector<key> exported;
  for (auto& a : task->args)
    m.args.push_back(export_arg(a, exported));
  if (!to.empty())
    return forward_task(std::move(task), to, std::move(m), std::move(exported));
  // This is the head: its global scheduler places it.
  auto demand = task->options.resources;
  auto args = m.args; // `m` moves into the continuation below
  place(demand, args,
        [this, task, m = std::move(m),
         exported = std::move(exported)](result<std::string> where) mutable {
          if (!where || *where == self_.name) {
            release_exports(exported);
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

void cluster_node::forward_task(detail::task_ptr task, const std::string& to,
                                wire_msg::task_submit m, std::vector<key> exported) {
  owner_.track({std::move(task), to, std::move(exported), nullptr}, to, std::move(m));
}

void cluster_node::place_and_forward(wire_msg::task_submit m) {
  auto demand = from_list(m.resources);
  if (!demand)
    return send_to(m.owner_node, wire_msg::task_result{m.result, to_wire(demand.err())});
  auto args = m.args;
  place(*demand, args, [this, m = std::move(m)](result<std::string> where) mutable {
    if (!where)
      return send_to(m.owner_node, wire_msg::task_result{m.result, to_wire(where.err())});
    m.placed = true;
    if (*where == self_.name) return run_task_here(std::move(m));
    send_to(*where, std::move(m));
  });
}

void cluster_node::run_task_here(wire_msg::task_submit m) {
  auto fail = [this, &m](error e) {
    send_to(m.owner_node, wire_msg::task_result{m.result, to_wire(e)});
  };
  auto entry = local_->app().find_entry(m.function);
  if (!entry) return fail(entry.err());
  auto demand = from_list(m.resources);
  if (!demand) return fail(demand.err());
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
  gather_args(m.args, f->params,
              [this, f, owner, id, opts](result<std::vector<detail::boxed_value>> args) {
                auto t = incoming(f->name, &f->fn, f->params, f->result, id, owner, args);
                if (!t) return;
                t->options = opts;
                t->result->set_producer(t);
                local_->submit(std::move(t));
              });
}

detail::task_ptr
cluster_node::incoming(std::string name, const detail::invoker* fn,
                       const std::vector<const detail::type_descriptor*>& params,
                       const detail::type_descriptor* result_type, const object_id& id,
                       const std::string& reply_to,
                       result<std::vector<detail::boxed_value>>& args) {
  auto t = std::make_shared<detail::task_spec>();
  t->name = std::move(name);
  t->fn = fn;
  t->params = params;
  t->result_type = result_type;
  t->owner = id.owner;
  t->result = std::make_shared<detail::object_slot>(id);
  reply_when_done(t->result, reply_to);
  if (!args) {
    t->result->set_error(args.err());
    return nullptr;
  }
  for (auto& v : *args)
    t->args.push_back({std::move(v), nullptr});
  return t;
}

void cluster_node::reply_when_done(const detail::slot_ptr& slot, const std::string& to) {
  std::weak_ptr<detail::object_slot> weak = slot;
  slot->when_done([this, weak, to] {
    auto s = weak.lock();
    if (!s) return;
    wire_msg::task_result r;
    r.result = to_wire(s->id());
    auto v = s->read();
    if (!v) {
      r.outcome = to_wire(v.err());
    } else {
      auto bytes = std::make_shared<std::vector<uint8_t>>(encode(*v));
      if (bytes->size() > cfg_.inline_threshold) {
        auto size = bytes->size();
        // Held before the owner hears of it, so its pulls find it.
        caf::anon_send(objects_, hold_atom::value,
                       hold_request{key_of(s->id()), *v, std::move(bytes), false});
        r.outcome = wire_msg::stored_at{self_.name, size};
      } else {
        r.outcome = wire_msg::value{v->type->name, std::move(*bytes)};
      }
    }
    send_to(to, std::move(r));
  });
}

void cluster_node::pull_result(detail::task_ptr task, const wire_msg::stored_at& where) {
  // Stays where it was made; this copy is pulled now, the holder keeps the primary (so
  // later tasks reading it run there) until this slot goes.
  auto slot = task->result;
  auto id = slot->id();
  wire_msg::remote_ref ref{to_wire(id), where.node, where.size};
  auto sink = releases_;
  slot->set_location(detail::object_slot::location{where.node, where.size});
  caf::anon_send(objects_, locate_atom::value, located_object{key_of(id), where.node, slot});
  publish(wire_msg::object_location{ref.id, where.node, where.size, true});
  auto release = [sink, id, node = where.node] {
    std::lock_guard<std::mutex> guard{sink->mtx};
    if (!sink->net) return;
    (void)sink->net->send(node, wire_msg::object_free{to_wire(id)});
    sink->forget(id);
  };
  // The callback keeps the task, its lineage: when the node holding the result dies
  // before this copy is complete, the owner runs the task again (its inputs are here).
  auto type = task->result_type;
  fetch(ref, type,
        [owner = owner_, task = std::move(task), slot, sink,
         release](result<detail::boxed_value> got) {
          if (!got) {
            release();
            if (got.err().code == errc::object_lost)
              owner.retry(task, "reconstructing its result: " + got.err().message, got.err());
            else
              slot->set_error(got.err());
            return;
          }
          slot->set_value(std::move(*got), std::make_unique<remote_hold>(sink, release));
        });
}

// -- objects ----------------------------------------------------------------------------

wire_msg::arg cluster_node::export_arg(const detail::task_arg& a,
                                       std::vector<key>& exported) {
  detail::boxed_value v = a.value;
  object_id id{new_owner_id(), 0};
  if (a.ref)
    // A holder this node lost touch with is not named: its own copy is shipped.
    if (auto where = a.ref->primary_copy(); where && net_->connected(where->node))
      return wire_msg::remote_ref{to_wire(a.ref->id()), where->node, where->size};
  if (a.ref) {
    auto r = a.ref->read();
    if (r) v = *r;
    id = a.ref->id();
  }
  auto bytes = std::make_shared<std::vector<uint8_t>>(encode(v));
  if (bytes->size() <= cfg_.inline_threshold)
    return wire_msg::value{v.type->name, std::move(*bytes)};
  auto k = key_of(id);
  auto size = bytes->size();
  // Held before the task that pulls it is sent, so its pulls find it.
  caf::anon_send(objects_, hold_atom::value, hold_request{k, v, std::move(bytes), true});
  exported.push_back(k);
  return wire_msg::remote_ref{to_wire(id), self_.name, size};
}

void cluster_node::release_exports(const std::vector<key>& exported) {
  if (!exported.empty()) caf::anon_send(objects_, release_atom::value, exported);
}

void cluster_node::gather_args(const std::vector<wire_msg::arg>& args,
                               const std::vector<const detail::type_descriptor*>& params,
                               values_cb done) {
  struct gather {
    std::mutex mtx;
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
      auto d = decode(*v, params[i]);
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
    fetch(std::get<wire_msg::remote_ref>(args[i]), params[i],
          [g, i](result<detail::boxed_value> v) {
            std::unique_lock<std::mutex> guard{g->mtx};
            if (v)
              g->values[i] = std::move(*v);
            else if (!g->failed)
              g->failed = v.err();
            if (--g->missing > 0) return;
            guard.unlock();
            if (g->failed)
              g->done(*g->failed);
            else
              g->done(std::move(g->values));
          });
}

void cluster_node::fetch(const wire_msg::remote_ref& ref,
                         const detail::type_descriptor* type, value_cb done) {
  caf::anon_send(objects_, fetch_atom::value, fetch_request{ref, type, std::move(done)});
}

} // namespace swarm::actors
