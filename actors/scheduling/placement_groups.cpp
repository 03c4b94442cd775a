#include "actors/scheduling/placement_groups.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <future>
#include <memory>

#include "actors/scheduling/protocol.hpp"

namespace swarm::actors {

namespace {

using rooms_t = std::vector<std::pair<std::string, resource_set>>;

// The first room at or after the preferred ones where `b` fits and `allowed` holds.
template <class Allowed>
rooms_t::iterator first_fit(rooms_t& rooms, const resource_set& b, Allowed allowed) {
  return std::find_if(rooms.begin(), rooms.end(),
                      [&](auto& r) { return allowed(r.first) && b.fits_in(r.second); });
}

} // namespace

std::optional<std::vector<std::string>>
place_bundles(const std::vector<resource_set>& bundles, placement_strategy strategy,
              const std::vector<std::pair<std::string, resource_set>>& free) {
  if (bundles.empty()) return std::nullopt;
  auto rooms = free;
  std::vector<std::string> out;
  std::map<std::string, size_t> used; // bundles of this group on each node
  auto take = [&](rooms_t::iterator r, const resource_set& b) {
    r->second -= b;
    ++used[r->first];
    out.push_back(r->first);
  };
  resource_set sum;
  for (auto& b : bundles)
    sum += b;
  auto one = first_fit(rooms, sum, [](const std::string&) { return true; });
  if (strategy == placement_strategy::strict_pack ||
      (strategy == placement_strategy::pack && one != rooms.end())) {
    if (one == rooms.end()) return std::nullopt;
    return std::vector<std::string>(bundles.size(), one->first);
  }
  for (auto& b : bundles) {
    rooms_t::iterator r = rooms.end();
    if (strategy == placement_strategy::pack) {
      // Where bundles of the group already are, then anywhere.
      r = first_fit(rooms, b, [&](const std::string& n) { return used.count(n) > 0; });
      if (r == rooms.end())
        r = first_fit(rooms, b, [](const std::string&) { return true; });
    } else {
      // The node holding the fewest of the group's bundles; strict: none yet.
      for (size_t k = 0; r == rooms.end() && k <= bundles.size(); ++k) {
        if (strategy == placement_strategy::strict_spread && k > 0) break;
        r = first_fit(rooms, b, [&](const std::string& n) {
          auto i = used.find(n);
          return (i == used.end() ? 0 : i->second) == k;
        });
      }
    }
    if (r == rooms.end()) return std::nullopt;
    take(r, b);
  }
  return out;
}

resource_set group_table::reserved_on(const std::string& node) const {
  resource_set out;
  for (auto& [id, g] : groups_)
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (g.nodes[i] == node) out += g.options.bundles[i];
  return out;
}

void group_table::handle(group_request r, const node_totals& nodes) {
  auto answer = [&r](result<detail::group_placement> x) {
    if (r.then) r.then(std::move(x));
  };
  switch (r.what) {
  case group_request::kind::create: {
    auto& bundles = r.options.bundles;
    if (bundles.empty())
      return answer(error{errc::invalid_argument, "a placement group needs bundles"});
    resource_set sum;
    for (size_t i = 0; i < bundles.size(); ++i) {
      if (bundles[i].empty())
        return answer(error{errc::invalid_argument, "bundle " + std::to_string(i) +
                                                        " of the placement group "
                                                        "holds no resources"});
      sum += bundles[i];
      if (!fits_somewhere(bundles[i], nodes))
        return answer(error{errc::infeasible, "bundle " + std::to_string(i) + " " +
                                                  bundles[i].to_string() +
                                                  " fits no node of the cluster"});
    }
    if (r.options.strategy == placement_strategy::strict_pack &&
        !fits_somewhere(sum, nodes))
      return answer(error{errc::infeasible, "strict_pack: the bundles together " +
                                                sum.to_string() +
                                                " fit no node of the cluster"});
    groups_[r.id].options = std::move(r.options);
    answer(detail::group_placement{});
    return place_waiting(nodes);
  }
  case group_request::kind::wait:
  case group_request::kind::query: {
    auto g = groups_.find(r.id);
    if (g == groups_.end())
      return answer(
          error{errc::invalid_argument, "placement group " + std::to_string(r.id) +
                                            " does not exist (removed, or never made)"});
    if (!g->second.nodes.empty()) return answer(g->second.placement());
    if (r.what == group_request::kind::query)
      return answer(error{errc::timeout, "placement group " + std::to_string(r.id) +
                                             " is not placed yet: wait for it first"});
    if (r.then) g->second.waiters.push_back(std::move(r.then));
    return;
  }
  case group_request::kind::remove: {
    auto g = groups_.find(r.id);
    if (g != groups_.end()) {
      for (auto& w : g->second.waiters)
        w(error{errc::cancelled,
                "placement group " + std::to_string(r.id) + " was removed"});
      groups_.erase(g);
    }
    answer(detail::group_placement{});
    return place_waiting(nodes);
  }
  }
}

bool group_table::fits_somewhere(const resource_set& r, const node_totals& nodes) const {
  return std::any_of(nodes.begin(), nodes.end(),
                     [&](auto& n) { return r.fits_in(n.second.first); }) ||
         std::any_of(scalable_.begin(), scalable_.end(),
                     [&](const resource_set& t) { return r.fits_in(t); });
}

std::vector<waiting_demand> group_table::waiting_bundles() const {
  std::vector<waiting_demand> out;
  for (auto& [id, g] : groups_) {
    if (!g.nodes.empty()) continue;
    auto& bundles = g.options.bundles;
    switch (g.options.strategy) {
    case placement_strategy::strict_pack: {
      resource_set all;
      for (auto& b : bundles)
        all += b;
      out.emplace_back(std::move(all));
      break;
    }
    case placement_strategy::strict_spread:
      for (auto& b : bundles)
        out.emplace_back(b, id);
      break;
    default:
      out.insert(out.end(), bundles.begin(), bundles.end());
    }
  }
  return out;
}

void group_table::nodes_changed(const node_totals& nodes) {
  for (auto& [id, g] : groups_) {
    bool lost = std::any_of(g.nodes.begin(), g.nodes.end(), [&](const std::string& n) {
      auto i = nodes.find(n);
      return i == nodes.end() || !i->second.second;
    });
    if (lost) g.nodes.clear(); // placed again, as a whole
  }
  place_waiting(nodes);
}

void group_table::place_waiting(const node_totals& nodes) {
  for (auto& [id, g] : groups_) {
    if (!g.nodes.empty()) continue;
    std::vector<std::pair<std::string, resource_set>> rooms;
    for (auto& [name, n] : nodes) {
      if (!n.second) continue;
      auto room = n.first;
      room -= reserved_on(name);
      rooms.emplace_back(name, room);
    }
    auto where = place_bundles(g.options.bundles, g.options.strategy, rooms);
    if (!where) continue; // waits; a later group may still fit
    g.nodes = std::move(*where);
    for (auto& w : std::exchange(g.waiters, {}))
      w(g.placement());
  }
}

namespace {

// How long a create, remove or query may take to be answered.
constexpr std::chrono::milliseconds answer_timeout{10000};

// Sends `r` to `scheduler` and waits up to `timeout` for its answer.
result<detail::group_placement> ask_groups(const caf::actor& scheduler, group_request r,
                                           std::chrono::milliseconds timeout) {
  using answer_t = result<detail::group_placement>;
  auto promise = std::make_shared<std::promise<answer_t>>();
  auto answer = promise->get_future();
  r.then = [promise](answer_t a) { promise->set_value(std::move(a)); };
  caf::anon_send(scheduler, group_atom::value, std::move(r));
  if (timeout == std::chrono::milliseconds::max())
    answer.wait();
  else if (answer.wait_for(timeout) != std::future_status::ready)
    return error{errc::timeout, "placement group not placed after " +
                                    std::to_string(timeout.count()) + " ms"};
  return answer.get();
}

} // namespace

result<void> create_group_at(const caf::actor& scheduler, uint64_t id,
                             placement_group_options o) {
  group_request r;
  r.what = group_request::kind::create;
  r.id = id;
  r.options = std::move(o);
  auto a = ask_groups(scheduler, std::move(r), answer_timeout);
  if (!a) return a.err();
  return {};
}

result<detail::group_placement> wait_group_at(const caf::actor& scheduler, uint64_t id,
                                              std::chrono::milliseconds timeout) {
  group_request r;
  r.id = id;
  if (timeout.count() <= 0) {
    r.what = group_request::kind::query;
    timeout = answer_timeout;
  }
  return ask_groups(scheduler, std::move(r), timeout);
}

result<void> remove_group_at(const caf::actor& scheduler, uint64_t id) {
  group_request r;
  r.what = group_request::kind::remove;
  r.id = id;
  auto a = ask_groups(scheduler, std::move(r), answer_timeout);
  if (!a) return a.err();
  return {};
}

} // namespace swarm::actors
