// `swarm timeline --config F --out trace.json [--node N]`: the tasks, actor calls and
// pulls that ended lately on every alive node, as a Chrome / Perfetto trace
// (chrome://tracing, ui.perfetto.dev).

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include "framework/cluster.hpp"
#include "tools/command.hpp"

namespace swarm::tools {

namespace {

using nlohmann::json;

json metadata(const char* what, int pid, int tid, const std::string& name) {
  json m{{"ph", "M"}, {"name", what}, {"pid", pid}, {"args", {{"name", name}}}};
  if (tid >= 0) m["tid"] = tid;
  return m;
}

} // namespace

int run_timeline(const timeline_options& opts) {
  auto cfg = load_cluster_config(opts.config);
  if (!cfg) {
    std::fprintf(stderr, "swarm timeline: %s\n", cfg.err().message.c_str());
    return 1;
  }
  auto rows = list_cluster(*cfg, "timeline", opts.node, std::chrono::seconds(5));
  if (!rows) {
    std::fprintf(stderr, "swarm timeline: %s\n", rows.err().message.c_str());
    return 1;
  }
  // One process per node (in the file's order); one thread per worker, then one per
  // actor, then one per node pulled from.
  std::map<std::string, int> pid;
  for (size_t i = 0; i < cfg->nodes.size(); ++i)
    pid[cfg->nodes[i].name] = static_cast<int>(i) + 1;
  using track = std::tuple<int, int64_t, size_t, std::string>; // pid, kind, track name
  std::map<track, int> tid;
  for (auto& r : *rows)
    if (r.numbers.size() == 5)
      tid.emplace(track{pid[r.node], r.numbers[0], r.detail.size(), r.detail}, 0);
  auto events = json::array();
  std::set<int> processes;
  int next = 0;
  for (auto& [t, id] : tid) {
    auto p = std::get<0>(t);
    if (processes.insert(p).second) {
      auto node =
          std::find_if(pid.begin(), pid.end(), [p](auto& n) { return n.second == p; });
      events.push_back(metadata("process_name", p, -1, node->first));
    }
    id = ++next;
    events.push_back(metadata("thread_name", p, id, std::get<3>(t)));
  }
  size_t counts[3] = {0, 0, 0};
  for (auto& r : *rows) {
    if (r.numbers.size() != 5) continue;
    auto kind = r.numbers[0];
    auto queued = r.numbers[1], started = r.numbers[2], ended = r.numbers[3];
    int p = pid[r.node];
    json e{{"ph", "X"},
           {"name", r.name},
           {"pid", p},
           {"tid", tid[track{p, kind, r.detail.size(), r.detail}]},
           {"ts", started},
           {"dur", ended - started},
           {"args", {{"state", r.state}}}};
    if (kind == timeline_kind::transfer) {
      ++counts[2];
      e["cat"] = "transfer";
      e["args"]["object"] = r.id;
      e["args"]["bytes"] = r.numbers[4];
    } else {
      ++counts[kind == timeline_kind::actor_call ? 1 : 0];
      e["cat"] = kind == timeline_kind::actor_call ? "actor call" : "task";
      e["args"]["result"] = r.id;
      if (kind == timeline_kind::task)
        e["args"]["waited_us"] = queued > 0 ? started - queued : 0;
    }
    events.push_back(std::move(e));
  }
  std::ofstream out{opts.out};
  out << json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump() << "\n";
  if (!out) {
    std::fprintf(stderr, "swarm timeline: cannot write '%s'\n", opts.out.c_str());
    return 1;
  }
  std::printf("wrote %zu task(s), %zu actor call(s) and %zu pull(s) from %zu node(s) to "
              "%s (open it in ui.perfetto.dev or chrome://tracing)\n",
              counts[0], counts[1], counts[2], processes.size(), opts.out.c_str());
  return 0;
}

} // namespace swarm::tools
