// `swarm start`, `swarm status` and `swarm stop`: deployment from one cluster file.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/human_bytes.hpp"
#include "framework/swarm.hpp"
#include "framework/tls_env.hpp"
#include "tools/bench_remote.hpp"
#include "tools/command.hpp"

namespace swarm::tools {

std::optional<cluster_config> load(const char* cmd, const std::string& path) {
  auto cfg = load_cluster_config(path);
  if (!cfg) {
    std::fprintf(stderr, "swarm %s: %s\n", cmd, cfg.err().message.c_str());
    return std::nullopt;
  }
  return std::move(*cfg);
}

namespace {

using namespace std::chrono_literals;

std::chrono::milliseconds seconds(double s) {
  return std::chrono::milliseconds(static_cast<long long>(s * 1000));
}

// What of `total` is available, each resource named: those all in use as 0.
std::string available_of(const resource_set& total, const resource_set& available) {
  std::string out;
  for (auto& [name, amount] : total.amounts()) {
    auto left = available.get(name);
    auto text =
        left > 0 ? resource_set{}.set(name, left).to_string() : "{" + name + ": 0}";
    out += (out.empty() ? "" : ", ") + text.substr(1, text.size() - 2);
  }
  return "{" + out + "}";
}

} // namespace

namespace {

// "name=amount,..." as resources; an error naming the item that is not one.
result<resource_set> parse_resources(const std::string& text) {
  resource_set out;
  size_t at = 0;
  while (at < text.size()) {
    auto end = std::min(text.find(',', at), text.size());
    auto item = text.substr(at, end - at);
    at = end + 1;
    auto eq = item.find('=');
    char* rest = nullptr;
    double amount =
        eq == std::string::npos ? -1 : std::strtod(item.c_str() + eq + 1, &rest);
    if (eq == 0 || eq == std::string::npos || rest == item.c_str() + eq + 1 || *rest ||
        !(amount >= 0) || item.substr(0, eq) == "CPU" || item.substr(0, eq) == "GPU")
      return error{errc::invalid_argument,
                   "'" + item +
                       "' is not NAME=AMOUNT (a custom resource; CPUs and GPUs "
                       "have --cpus and --gpus)"};
    out.set(item.substr(0, eq), amount);
  }
  return out;
}

// The cluster a node started with `--address` joins, with the node last: the head's
// settings, and the file's for this node when one is given (its secret, store, spill,
// log and code).
std::optional<cluster_config> join(const start_options& opts) {
  auto fail = [&](const std::string& why) {
    std::fprintf(stderr, "swarm start: %s\n", why.c_str());
    return std::nullopt;
  };
  std::optional<cluster_config> file;
  if (!opts.config.empty() && !(file = load("start", opts.config))) return std::nullopt;
  auto head = head_address(opts.address, "--address");
  if (!head) return fail(head.err().message);
  if (file) {
    head->secret = file->secret;
  } else if (const char* secret = std::getenv("SWARM_SECRET")) {
    head->secret = secret;
  } else {
    return fail("--address needs the cluster's secret: give --config with the cluster "
                "file, or set SWARM_SECRET");
  }
  auto tls = file ? result<wire_msg::tls_options>{file->tls} : tls_from_env();
  if (!tls) return fail(tls.err().message);
  head->tls = *tls;
  head->name = opts.node;
  join_options j{*head, {}};
  j.node.address = opts.advertise;
  j.node.port = opts.port;
  j.node.cpus = opts.cpus;
  j.node.gpus = opts.gpus;
  auto resources = parse_resources(opts.resources);
  if (!resources) return fail("--resources: " + resources.err().message);
  j.node.resources = std::move(*resources);
  j.node.node_type = opts.node_type;
  auto cfg = join_cluster(j);
  if (!cfg) return fail(cfg.err().message);
  if (file) {
    cfg->object_store_bytes = file->object_store_bytes;
    cfg->object_pool_bytes = file->object_pool_bytes;
    cfg->spill = file->spill;
    cfg->spill_dir = file->spill_dir;
    cfg->spill_limit_bytes = file->spill_limit_bytes;
    cfg->stop_timeout = file->stop_timeout;
    cfg->code_libraries = file->code_libraries;
    cfg->verbosity = file->verbosity;
    cfg->http = file->http;
  }
  return std::move(*cfg);
}

} // namespace

int run_start(const start_options& opts) {
  auto node = opts.node;
  auto libraries = opts.libraries;
  if (opts.address.empty() && (opts.config.empty() || node.empty())) {
    std::fprintf(stderr, "swarm start: give --config and --node (a node of the file), "
                         "or --address HOST:PORT (join a running cluster)\n");
    return 2;
  }
  auto cfg = opts.address.empty() ? load("start", opts.config) : join(opts);
  if (!cfg) return 1;
  if (!opts.address.empty()) {
    node = cfg->nodes.back().name;
  } else if (auto spec = cfg->find(node); !spec) {
    std::fprintf(stderr,
                 "swarm start: %s; to join the running cluster as a node the file does "
                 "not list, give --address with the head's HOST:PORT\n",
                 spec.err().message.c_str());
    return 1;
  }
  // Metrics, and the head's dashboard, are on by default for a node the tool runs.
  for (auto& spec : cfg->nodes)
    if (spec.name == node) {
      if (opts.no_metrics)
        spec.metrics_port.reset();
      else if (!spec.metrics_port && spec.port != 0 && spec.port <= 65535 - 1000)
        spec.metrics_port = static_cast<uint16_t>(spec.port + 1000);
      if (opts.no_dashboard)
        spec.dashboard_port.reset();
      else if (spec.role == node_spec::role_type::head && !spec.dashboard_port &&
               spec.port <= 65535 - 2000)
        spec.dashboard_port = static_cast<uint16_t>(spec.port + 2000);
    }
  application app;
  register_builtins(app);
  libraries.insert(libraries.begin(), cfg->code_libraries.begin(),
                   cfg->code_libraries.end());
  for (auto& lib : libraries)
    if (auto ok = app.load_library(lib); !ok) {
      std::fprintf(stderr, "swarm start: node '%s': %s\n", node.c_str(),
                   ok.err().message.c_str());
      return 1;
    }
  return serve(app, *cfg, node, serve_options{opts.wait, seconds(opts.wait_timeout_s)});
}

int run_status(const status_options& opts) {
  auto wait = opts.wait;
  auto cfg = load("status", opts.config);
  if (!cfg) return 1;
  auto state = cluster_status(*cfg, 5s);
  // --wait N: until N nodes are alive, for scripts that start a cluster (bounded).
  for (auto deadline = std::chrono::steady_clock::now() + seconds(opts.wait_timeout_s);
       wait > 0 && (!state || state->alive() < wait) &&
       std::chrono::steady_clock::now() < deadline;
       state = cluster_status(*cfg, 5s))
    std::this_thread::sleep_for(100ms);
  if (!state) {
    std::fprintf(stderr, "swarm status: %s\n", state.err().message.c_str());
    return 1;
  }
  auto* nodes = &state->nodes;
  std::printf("cluster '%s': %zu node(s), %zu alive\n", cfg->name.c_str(), nodes->size(),
              state->alive());
  std::printf("%-16s %-22s %-6s %-5s %7s %7s %-44s %-28s %-10s %-28s %-22s %s\n", "node",
              "address", "role", "state", "queued", "running",
              "resources available of total", "store (pulled copies)", "pooled",
              "spilled (spills/restores)", "cache hits/misses/evict", "last seen");
  for (auto& n : *nodes) {
    auto where = n.address + ":" + std::to_string(n.port);
    auto store = human_bytes(n.store_bytes) + " of " + human_bytes(n.store_capacity) +
                 " (" + human_bytes(n.pulled_bytes) + ")";
    auto resources = available_of(n.total, n.available) + " of " + n.total.to_string();
    auto spilled = human_bytes(n.spilled_bytes) + " (" + std::to_string(n.spills) + "/" +
                   std::to_string(n.restores) + ")";
    auto cache = std::to_string(n.cache_hits) + "/" + std::to_string(n.cache_misses) +
                 "/" + std::to_string(n.evictions);
    std::printf(
        "%-16s %-22s %-6s %-5s %7u %7u %-44s %-28s %-10s %-28s %-22s %llu ms ago\n",
        n.name.c_str(), where.c_str(),
        n.head     ? "head"
        : n.client ? "client"
                   : "worker",
        n.alive ? "up" : "down", n.queued, n.running, resources.c_str(), store.c_str(),
        human_bytes(n.pooled_bytes).c_str(), spilled.c_str(), cache.c_str(),
        static_cast<unsigned long long>(n.last_seen_ms));
  }
  // Where work of several priorities waits, how much of each (the global scheduler
  // places spilled work by what it would wait behind).
  for (auto& n : *nodes) {
    if (n.by_priority.empty() ||
        (n.by_priority.size() == 1 && n.by_priority[0].first == 0))
      continue;
    std::string line;
    for (auto& [p, tasks] : n.by_priority)
      line +=
          (line.empty() ? "" : ", ") + std::to_string(tasks) + " at " + std::to_string(p);
    std::printf("%s: tasks by priority: %s\n", n.name.c_str(), line.c_str());
  }
  // What stopped nodes said they did with their work.
  for (auto& n : *nodes)
    if (!n.stop_report.empty())
      std::printf("%s: stopped: %s\n", n.name.c_str(), n.stop_report.c_str());
  // Nodes of the file the head has never heard of.
  std::string absent;
  for (auto& spec : cfg->nodes) {
    bool known = false;
    for (auto& n : *nodes)
      known |= n.name == spec.name;
    if (known) continue;
    auto where = spec.address + ":" + std::to_string(spec.port);
    std::printf("%-16s %-22s %-6s %s\n", spec.name.c_str(), where.c_str(),
                spec.role == node_spec::role_type::head ? "head" : "worker",
                "never joined");
    absent += (absent.empty() ? "" : ", ") + spec.name;
  }
  if (!state->launches.empty()) {
    std::printf("\nautoscaler:\n");
    for (auto& l : state->launches)
      std::printf("  %s %-10s %-24s for %llu ms: %s\n", l.type.c_str(), l.state.c_str(),
                  l.node.empty() ? "(no node)" : l.node.c_str(),
                  static_cast<unsigned long long>(l.since_ms), l.why.c_str());
  }
  if (!state->kv_shards.empty()) {
    std::printf("\nkey-value shards (served by the first of each chain):\n");
    for (size_t i = 0; i < state->kv_shards.size(); ++i) {
      std::string chain;
      for (auto& m : state->kv_shards[i])
        chain += (chain.empty() ? "" : " -> ") + m;
      std::printf("  %-4zu %s\n", i, chain.empty() ? "(not placed)" : chain.c_str());
    }
  }
  if (!state->jobs.empty()) {
    std::printf("\n%-20s %-16s %8s %-8s\n", "job", "driver node", "pid", "state");
    for (auto& j : state->jobs)
      std::printf("%-20llu %-16s %8u %-8s\n", static_cast<unsigned long long>(j.id),
                  j.driver.c_str(), j.pid, j.running ? "running" : "ended");
  }
  if (wait > 0 && state->alive() < wait) {
    std::fprintf(stderr,
                 "swarm status: %zu of the %zu nodes waited for are alive after %g s%s\n",
                 state->alive(), wait, opts.wait_timeout_s,
                 absent.empty() ? "" : (" (never joined: " + absent + ")").c_str());
    return 1;
  }
  return 0;
}

int run_list(const list_options& opts) {
  auto cfg = load("list", opts.config);
  if (!cfg) return 1;
  auto rows = list_cluster(*cfg, opts.what, opts.node, 5s);
  if (!rows) {
    std::fprintf(stderr, "swarm list: %s\n", rows.err().message.c_str());
    return 1;
  }
  bool tasks = opts.what == "tasks" || opts.what == "failures";
  const char* id = tasks ? "result" : opts.what == "actors" ? "actor name" : "object";
  const char* name = tasks ? "function" : opts.what == "actors" ? "type" : "";
  char line[1024];
  std::printf("%-16s %-28s %-24s %-10s %s\n", "node", id, name, "state", "detail");
  size_t shown = 0;
  for (auto& r : *rows) {
    std::snprintf(line, sizeof line, "%-16s %-28s %-24s %-10s %s", r.node.c_str(),
                  r.id.c_str(), r.name.c_str(), r.state.c_str(), r.detail.c_str());
    if (!opts.state.empty() && r.state != opts.state) continue;
    if (!opts.filter.empty() && std::string{line}.find(opts.filter) == std::string::npos)
      continue;
    std::printf("%s\n", line);
    ++shown;
  }
  std::printf("%zu of %zu %s\n", shown, rows->size(), opts.what.c_str());
  return 0;
}

int run_logs(const logs_options& opts) {
  auto cfg = load("logs", opts.config);
  if (!cfg) return 1;
  auto rows = list_cluster(*cfg, "logs", opts.node, 5s);
  if (!rows) {
    std::fprintf(stderr, "swarm logs: %s\n", rows.err().message.c_str());
    return 1;
  }
  if (rows->empty()) {
    // No rows: the node is not alive, or it has logged nothing yet.
    auto state = cluster_status(*cfg, 5s);
    bool alive =
        state && std::any_of(state->nodes.begin(), state->nodes.end(),
                             [&](auto& n) { return n.name == opts.node && n.alive; });
    if (!alive) {
      std::fprintf(stderr, "swarm logs: node '%s' is not alive\n", opts.node.c_str());
      return 1;
    }
    std::fprintf(stderr, "swarm logs: node '%s' has logged nothing yet\n",
                 opts.node.c_str());
  }
  auto skip = rows->size() > opts.lines ? rows->size() - opts.lines : 0;
  for (size_t i = skip; i < rows->size(); ++i)
    std::printf("%s\n", (*rows)[i].detail.c_str());
  return 0;
}

int run_stop(const stop_options& opts) {
  const auto& node = opts.node;
  auto cfg = load("stop", opts.config);
  if (!cfg) return 1;
  if (auto ok = stop_cluster(*cfg, node, 5s); !ok) {
    std::fprintf(stderr, "swarm stop: %s\n", ok.err().message.c_str());
    return 1;
  }
  if (node.empty()) {
    std::printf("asked every node to stop\n");
    return 0;
  }
  // One node: waited for, within its stop's deadline, and what it did said.
  auto report = wait_stopped(*cfg, node, cfg->stop_timeout + 5s);
  if (!report && report.err().code != errc::timeout) {
    std::printf("asked node '%s' to stop; not waited for: %s\n", node.c_str(),
                report.err().message.c_str());
    return 0;
  }
  if (!report) {
    std::fprintf(stderr, "swarm stop: %s\n", report.err().message.c_str());
    return 1;
  }
  std::printf("node '%s' stopped%s%s\n", node.c_str(), report->empty() ? "" : ": ",
              report->c_str());
  return 0;
}

} // namespace swarm::tools
