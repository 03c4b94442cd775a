#include "actors/scheduling/autoscale_plan.hpp"

#include <algorithm>
#include <set>

namespace swarm::actors {

namespace {

std::string seconds_text(std::chrono::steady_clock::duration d) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  return std::to_string(ms / 1000) + "." + std::to_string(ms % 1000 / 100) + " s";
}

} // namespace

autoscale_plan::autoscale_plan(autoscaler_config cfg)
    : cfg_(std::move(cfg)), types_(cfg_.node_types.size()) {}

std::vector<scale_action>
autoscale_plan::decide(const std::vector<waiting_demand>& waiting,
                       const std::vector<scaled_node>& nodes, time_point now,
                       size_t live) {
  using phase = scaled_node::phase;
  std::vector<scale_action> out;
  std::vector<size_t> count(types_.size());
  size_t launching = 0;
  // What a node still starting has left, and the strict_spread groups it holds one of.
  struct room_left {
    resource_set free;
    std::set<uint64_t> groups;
  };
  std::vector<room_left> room;
  for (auto& n : nodes) {
    if (n.type >= types_.size() || n.state == phase::stopping) continue;
    if (n.state == phase::launching && now - n.since >= cfg_.launch_timeout) {
      out.push_back({scale_action::kind::fail, n.type, n.name,
                     "it did not join within " + seconds_text(cfg_.launch_timeout)});
      continue;
    }
    ++count[n.type];
    if (n.state == phase::launching) {
      ++launching;
      room.push_back({cfg_.node_types[n.type].total(), {}});
    }
  }
  auto cap = cfg_.launch_cap(live);
  auto can_launch = [&](size_t t) {
    return count[t] < cfg_.node_types[t].max && launching < cap &&
           now >= types_[t].next_try;
  };
  auto launch = [&](size_t t, std::string why) {
    out.push_back({scale_action::kind::launch, t, {}, std::move(why)});
    ++count[t];
    ++launching;
    room.push_back({cfg_.node_types[t].total(), {}});
  };
  auto take = [](room_left& r, const waiting_demand& w) {
    r.free -= w.demand;
    if (w.apart) r.groups.insert(*w.apart);
  };
  for (size_t t = 0; t < types_.size(); ++t)
    while (count[t] < cfg_.node_types[t].min && can_launch(t))
      launch(t, "its type keeps " + std::to_string(cfg_.node_types[t].min) + " running");
  for (auto& w : waiting) {
    auto fits = std::find_if(room.begin(), room.end(), [&](const room_left& r) {
      return w.demand.fits_in(r.free) && !(w.apart && r.groups.count(*w.apart));
    });
    if (fits != room.end()) {
      take(*fits, w);
      continue;
    }
    for (size_t t = 0; t < types_.size(); ++t)
      if (w.demand.fits_in(cfg_.node_types[t].total()) && can_launch(t)) {
        launch(t, "work demanding " + w.demand.to_string() + " fits no live node");
        take(room.back(), w);
        break;
      }
  }
  for (auto& n : nodes) {
    if (n.type >= types_.size() || n.state != phase::up || !n.idle_since) continue;
    auto& type = cfg_.node_types[n.type];
    auto total = type.total();
    bool wanted =
        std::any_of(waiting.begin(), waiting.end(),
                    [&](const waiting_demand& w) { return w.demand.fits_in(total); });
    if (now - *n.idle_since < type.idle_timeout || count[n.type] <= type.min || wanted)
      continue;
    out.push_back({scale_action::kind::stop, n.type, n.name,
                   "idle for " + seconds_text(now - *n.idle_since)});
    --count[n.type];
  }
  return out;
}

void autoscale_plan::launch_failed(size_t type, time_point now) {
  auto& t = types_.at(type);
  auto wait = cfg_.retry_after;
  for (size_t i = 0; i < t.failures && wait < std::chrono::minutes(1); ++i)
    wait *= 2;
  t.next_try = now + std::min<std::chrono::milliseconds>(wait, std::chrono::minutes(1));
  ++t.failures;
}

void autoscale_plan::launch_joined(size_t type) {
  types_.at(type) = {};
}

} // namespace swarm::actors
