#include "actors/observability/dashboard_snapshot.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <future>
#include <map>
#include <vector>

#include "framework/cluster.hpp"

namespace swarm::actors {

namespace {

using json = nlohmann::json;

json amounts(const resource_set& r) {
  json out = json::object();
  for (auto& [name, amount] : r.amounts())
    out[name] = amount;
  return out;
}

int64_t number(const listed& row, size_t i) {
  return i < row.numbers.size() ? row.numbers[i] : 0;
}

// Text from the nodes need not be valid UTF-8.
std::string text(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// What one alive node reports: its summary, actors and recent failures.
result<std::vector<node_list>> ask(const cluster_config& cfg, const node_status& node,
                                   std::chrono::milliseconds timeout) {
  return list_node(cfg, node, {{"summary", 0}, {"actors", 200}, {"failures", 20}},
                   timeout);
}

} // namespace

std::string dashboard_snapshot(const cluster_config& cfg,
                               std::chrono::milliseconds timeout) {
  json out;
  out["cluster"] = cfg.name;
  out["head"] = cfg.head().name;
  out["time_ms"] = now_ms();
  out["nodes"] = json::array();
  out["functions"] = json::array();
  out["actors"] = json::array();
  out["failures"] = json::array();
  out["jobs"] = json::array();
  auto state = cluster_status(cfg, timeout);
  if (!state) {
    out["error"] = state.err().message;
    return text(out);
  }
  // The alive nodes are asked at once.
  std::map<std::string, std::future<result<std::vector<node_list>>>> asked;
  for (auto& n : state->nodes)
    if (n.alive && !n.client)
      asked.emplace(n.name,
                    std::async(std::launch::async, ask, std::cref(cfg), n, timeout));

  std::map<std::string, std::array<int64_t, 4>> functions;
  int64_t queued = 0, actors_total = 0;
  std::vector<json> failures;
  for (auto& n : state->nodes) {
    json node{{"name", n.name},
              {"address", n.address},
              {"port", n.port},
              {"role", n.head     ? "head"
                       : n.client ? "client"
                                  : "worker"},
              {"state", n.alive ? "up" : "down"},
              {"queued", n.queued},
              {"running", n.running},
              {"last_seen_ms", n.last_seen_ms},
              {"total", amounts(n.total)},
              {"available", amounts(n.available)},
              {"store",
               {{"bytes", n.store_bytes},
                {"capacity", n.store_capacity},
                {"pulled", n.pulled_bytes},
                {"pooled", n.pooled_bytes}}}};
    queued += n.queued;
    auto at = asked.find(n.name);
    if (at != asked.end()) {
      auto lists = at->second.get();
      if (!lists) {
        node["error"] = lists.err().message;
      } else {
        for (auto& row : (*lists)[0].rows) {
          if (row.id == "function") {
            auto& f = functions[row.name];
            for (size_t i = 0; i < 4; ++i)
              f[i] += number(row, i);
          } else if (row.id == "actors") {
            node["actors_alive"] = number(row, 0);
            node["actors_dead"] = number(row, 1);
          } else if (row.id == "objects") {
            node["objects"] = number(row, 0);
          } else if (row.state == "error") {
            node["error"] = row.detail;
          }
        }
        actors_total += static_cast<int64_t>((*lists)[1].total);
        for (auto& a : (*lists)[1].rows)
          out["actors"].push_back({{"node", a.node},
                                   {"name", a.id},
                                   {"type", a.name},
                                   {"state", a.state},
                                   {"detail", a.detail}});
        for (auto& f : (*lists)[2].rows)
          failures.push_back({{"node", f.node},
                              {"id", f.id},
                              {"function", f.name},
                              {"error", f.detail},
                              {"ended_ms", number(f, 0) / 1000}});
      }
    }
    out["nodes"].push_back(std::move(node));
  }
  for (auto& spec : cfg.nodes)
    if (std::none_of(state->nodes.begin(), state->nodes.end(),
                     [&](auto& n) { return n.name == spec.name; }))
      out["nodes"].push_back(
          {{"name", spec.name},
           {"address", spec.address},
           {"port", spec.port},
           {"role", spec.role == node_spec::role_type::head ? "head" : "worker"},
           {"state", "never joined"}});

  int64_t totals[4] = {0, 0, 0, 0};
  for (auto& [name, f] : functions) {
    out["functions"].push_back({{"name", name},
                                {"submitted", f[0]},
                                {"running", f[1]},
                                {"finished", f[2]},
                                {"failed", f[3]}});
    for (size_t i = 0; i < 4; ++i)
      totals[i] += f[i];
  }
  out["tasks"] = {{"queued", queued},
                  {"submitted", totals[0]},
                  {"running", totals[1]},
                  {"finished", totals[2]},
                  {"failed", totals[3]}};
  out["actors_total"] = actors_total;
  std::sort(failures.begin(), failures.end(), [](const json& a, const json& b) {
    return a["ended_ms"].get<int64_t>() > b["ended_ms"].get<int64_t>();
  });
  if (failures.size() > 20) failures.resize(20);
  out["failures"] = std::move(failures);
  for (auto& j : state->jobs)
    out["jobs"].push_back({{"id", j.id},
                           {"driver", j.driver},
                           {"pid", j.pid},
                           {"state", j.running ? "running" : "ended"},
                           {"started_ms", j.started_ms},
                           {"ended_ms", j.ended_ms}});
  out["autoscaler"] = json::array();
  for (auto& l : state->launches)
    out["autoscaler"].push_back({{"node", l.node},
                                 {"type", l.type},
                                 {"state", l.state},
                                 {"why", l.why},
                                 {"since_ms", l.since_ms}});
  return text(out);
}

} // namespace swarm::actors
