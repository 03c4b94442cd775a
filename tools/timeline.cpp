// `swarm timeline --config F --out trace.json [--node N]`: the tasks that ended lately on
// every alive node, as a Chrome / Perfetto trace (chrome://tracing, ui.perfetto.dev).

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>

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
  // One process per node (in the file's order), one thread per worker.
  std::map<std::string, int> pid;
  for (size_t i = 0; i < cfg->nodes.size(); ++i)
    pid[cfg->nodes[i].name] = static_cast<int>(i) + 1;
  auto events = json::array();
  std::set<std::pair<int, int>> threads;
  std::set<int> processes;
  for (auto& r : *rows) {
    if (r.numbers.size() != 4) continue;
    int p = pid[r.node];
    int tid = static_cast<int>(r.numbers[0]) + 1;
    if (processes.insert(p).second)
      events.push_back(metadata("process_name", p, -1, r.node));
    if (threads.insert({p, tid}).second)
      events.push_back(
          metadata("thread_name", p, tid, "worker " + std::to_string(tid - 1)));
    auto queued = r.numbers[1], started = r.numbers[2], ended = r.numbers[3];
    events.push_back({{"ph", "X"},
                      {"cat", "task"},
                      {"name", r.name},
                      {"pid", p},
                      {"tid", tid},
                      {"ts", started},
                      {"dur", ended - started},
                      {"args",
                       {{"result", r.id},
                        {"state", r.state},
                        {"waited_us", queued > 0 ? started - queued : 0}}}});
  }
  std::ofstream out{opts.out};
  out << json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump() << "\n";
  if (!out) {
    std::fprintf(stderr, "swarm timeline: cannot write '%s'\n", opts.out.c_str());
    return 1;
  }
  std::printf("wrote %zu task(s) from %zu node(s) to %s (open it in ui.perfetto.dev or "
              "chrome://tracing)\n",
              rows->size(), processes.size(), opts.out.c_str());
  return 0;
}

} // namespace swarm::tools
