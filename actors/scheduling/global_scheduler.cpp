#include "actors/scheduling/global_scheduler.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <deque>
#include <map>

#include "actors/scheduling/protocol.hpp"

namespace swarm::actors {

namespace {

struct global_state {
  std::map<std::string, node_report> nodes;
  group_table groups;
  // What the autoscaler may still start (the totals of its node types), and the work
  // that fits no live node but one of them: placed when a node joins, in order.
  std::vector<resource_set> scalable;
  std::string why_not_scaled; // why the types it can no longer start are gone
  std::deque<placement_request> waiting;

  bool fits_scalable(const resource_set& demand) const {
    return std::any_of(scalable.begin(), scalable.end(),
                       [&](const resource_set& t) { return demand.fits_in(t); });
  }

  group_table::node_totals totals() const {
    group_table::node_totals out;
    for (auto& [name, n] : nodes)
      out[name] = {n.total, n.alive};
    return out;
  }
};

// Why no live node can take `req`, naming every node: built only when placing failed.
error why_not_placed(const global_state& st, const placement_request& req) {
  std::string dead;    // nodes that would fit but are dead
  std::string lacking; // nodes that have not registered what it needs
  std::string seen;    // nodes that could run it, with what they have
  size_t registered = 0;
  for (auto& [name, n] : st.nodes) {
    if (!n.abilities.can_run(req.needs)) {
      add_quoted(lacking, name);
      continue;
    }
    ++registered;
    seen += (seen.empty() ? "" : ", ") + name + " " + n.total.to_string();
    if (req.demand.fits_in(n.total) && !n.alive) add_quoted(dead, name);
  }
  if (!dead.empty()) return only_dead_nodes_fit(req.demand, dead);
  if (registered == 0 && !lacking.empty())
    return error{errc::unregistered, "no node of the cluster can run " +
                                         req.needs.to_string() +
                                         ": it is not registered on " + lacking};
  if (lacking.empty())
    return error{errc::infeasible, "demands " + req.demand.to_string() +
                                       " but no node of the cluster has it (" + seen +
                                       ")"};
  return error{errc::infeasible, "demands " + req.demand.to_string() +
                                     " but no node that registered " +
                                     req.needs.to_string() + " has it (" + seen +
                                     "), and it is not registered on " + lacking};
}

result<std::string> choose(global_state& st, const placement_request& req) {
  const std::string* best = nullptr;
  uint64_t best_bytes = 0, best_ahead = 0, best_queued = 0;
  bool best_free = false; // outside what placement groups reserved there
  bool best_avoided = false;
  for (auto& [name, n] : st.nodes) {
    if (!n.alive || !n.abilities.can_run(req.needs) || !req.demand.fits_in(n.total))
      continue;
    uint64_t bytes = 0;
    for (auto& [where, size] : req.input_bytes)
      if (where == name) bytes += size;
    bool free = true;
    if (!st.groups.empty()) {
      auto room = n.total;
      room -= st.groups.reserved_on(name);
      free = req.demand.fits_in(room);
    }
    auto ahead = n.ahead_of(req.priority);
    bool avoided = std::find(req.avoid.begin(), req.avoid.end(), name) != req.avoid.end();
    auto better = [&] {
      if (!best) return true;
      if (avoided != best_avoided) return !avoided;
      if (free != best_free) return free;
      if (bytes != best_bytes) return bytes > best_bytes;
      if (ahead != best_ahead) return ahead < best_ahead;
      return n.queued < best_queued;
    };
    if (better()) {
      best = &name;
      best_bytes = bytes;
      best_ahead = ahead;
      best_queued = n.queued;
      best_free = free;
      best_avoided = avoided;
    }
  }
  if (!best) return why_not_placed(st, req);
  auto& chosen = st.nodes[*best];
  ++chosen.queued;
  auto at = std::find_if(chosen.by_priority.begin(), chosen.by_priority.end(),
                         [&](auto& c) { return c.first == req.priority; });
  if (at == chosen.by_priority.end())
    chosen.by_priority.emplace_back(req.priority, 1);
  else
    ++at->second;
  return *best;
}

// Class-based: a function-based actor spawned without arguments trips UBSan inside
// CAF 0.17 (a reference bound to its empty argument tuple's null pointer).
class global_scheduler : public caf::event_based_actor {
public:
  explicit global_scheduler(caf::actor_config& cfg) : caf::event_based_actor(cfg) {}

  caf::behavior make_behavior() override {
    return {
        [this](update_atom, const std::string& name, node_report& report) {
          auto& n = state_.nodes[name];
          bool changed = n.alive != report.alive || !(n.total == report.total);
          n = std::move(report);
          if (!changed) return;
          state_.groups.nodes_changed(state_.totals());
          place_waiting();
        },
        [this](scalable_atom, std::vector<resource_set>& types, std::string& why) {
          state_.groups.set_scalable(types);
          state_.scalable = std::move(types);
          state_.why_not_scaled = std::move(why);
          place_waiting();
        },
        [this](waiting_atom) {
          std::vector<waiting_demand> out;
          for (auto& r : state_.waiting)
            out.emplace_back(r.demand);
          auto bundles = state_.groups.waiting_bundles();
          out.insert(out.end(), bundles.begin(), bundles.end());
          return out;
        },
        [this](group_atom, group_request& r) {
          state_.groups.handle(std::move(r), state_.totals());
        },
        [this](place_atom, placement_request& req) {
          auto chosen = choose(state_, req);
          if (waits(chosen, req))
            state_.waiting.push_back(std::move(req));
          else if (req.then)
            req.then(std::move(chosen));
        },
    };
  }

private:
  // Whether `req`, which no live node can take (`chosen`), waits for a node the
  // autoscaler may start.
  bool waits(const result<std::string>& chosen, const placement_request& req) const {
    // Infeasible, or only dead nodes would fit it.
    return !chosen &&
           (chosen.err().code == errc::infeasible ||
            chosen.err().code == errc::node_unreachable) &&
           state_.fits_scalable(req.demand);
  }

  // Places what waits where it can now; fails what no node type fits any more.
  void place_waiting() {
    std::deque<placement_request> still;
    for (auto& req : state_.waiting) {
      auto chosen = choose(state_, req);
      if (waits(chosen, req)) {
        still.push_back(std::move(req));
        continue;
      }
      if (!chosen && !state_.why_not_scaled.empty())
        chosen = error{errc::infeasible,
                       chosen.err().message + "; " + state_.why_not_scaled};
      if (req.then) req.then(std::move(chosen));
    }
    state_.waiting = std::move(still);
  }

  global_state state_;
};

} // namespace

caf::actor spawn_global_scheduler(caf::actor_system& sys) {
  return sys.spawn<global_scheduler>();
}

} // namespace swarm::actors
