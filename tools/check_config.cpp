// `swarm check-config --config FILE [--node NAME]`: validates a cluster file, loads its
// `[tls]` files and `[code] libraries` as `swarm start` would, and shows what each node
// will offer.
#include <cstdio>

#include "framework/application.hpp"
#include "framework/cluster_config.hpp"
#include "framework/secret_weakness.hpp"
#include "tools/command.hpp"
#include "transport/tls_context.hpp"

namespace swarm::tools {

int run_check_config(const check_config_options& opts) {
  const auto& path = opts.config;
  const auto& node = opts.node;
  auto cfg = load_cluster_config(path);
  if (!cfg) {
    std::fprintf(stderr, "swarm: invalid cluster file: %s\n", cfg.err().message.c_str());
    return 2;
  }
  if (!node.empty()) {
    if (auto n = cfg->find(node); !n) {
      std::fprintf(stderr, "swarm: %s\n", n.err().message.c_str());
      return 2;
    }
  }
  std::printf(
      "cluster '%s': %zu node(s), %zu control-store shard(s) x %zu (key-value table on "
      "%zu node(s)), heartbeat %lld ms, node timeout %lld ms\n",
      cfg->name.c_str(), cfg->nodes.size(), cfg->gcs_shards, cfg->gcs_replication,
      cfg->gcs_hosts, static_cast<long long>(cfg->heartbeat_interval.count()),
      static_cast<long long>(cfg->node_timeout.count()));
  std::printf("log level %s\n", to_string(cfg->verbosity));
  std::printf("metrics and dashboard: %s, %zu thread(s), %lld ms per request\n",
              cfg->http.token.empty() ? "open to anyone who reaches them"
                                      : "behind the [http] token",
              cfg->http.threads,
              static_cast<long long>(cfg->http.request_timeout.count()));
  std::printf("jobs: %s%s\n",
              cfg->jobs.enabled() ? "on, behind the [jobs] token"
                                  : "off (no [jobs] token)",
              cfg->jobs.run_as.empty() ? "" : (", run as " + cfg->jobs.run_as).c_str());
  std::printf("control store %s%s\n",
              cfg->gcs_dir.empty() ? "in memory only" : "persisted in ",
              cfg->gcs_dir.empty() ? "" : cfg->runtime_for(cfg->head()).gcs_dir.c_str());
  // The [tls] files, loaded as a node loads them at its start.
  if (cfg->tls.use == wire_msg::tls_options::mode::off) {
    std::printf("tls: off, every frame in the clear\n");
  } else if (auto tls = wire_msg::tls_context::make(cfg->tls, cfg->secret); !tls) {
    std::fprintf(stderr, "swarm: invalid cluster file: %s\n", tls.err().message.c_str());
    return 2;
  } else {
    std::printf("tls: %s, %s\n", to_string(cfg->tls.use),
                cfg->tls.certificates() ? ("certificate " + cfg->tls.cert +
                                           " (loaded), authority " + cfg->tls.ca)
                                              .c_str()
                                        : "a key derived from the cluster secret");
  }
  // The file's user code, loaded beside the tool's own registrations as on a node.
  application app;
  register_builtins(app);
  bool code_ok = true;
  for (auto& lib : cfg->code_libraries) {
    auto functions = app.function_names().size();
    auto types = app.actor_type_names().size();
    if (auto ok = app.load_library(lib); !ok) {
      std::fprintf(stderr, "swarm: invalid cluster file: %s\n", ok.err().message.c_str());
      code_ok = false;
      continue;
    }
    std::printf("code %s: %zu function(s), %zu actor type(s)\n", lib.c_str(),
                app.function_names().size() - functions,
                app.actor_type_names().size() - types);
  }
  if (!code_ok) return 2;
  for (auto& n : cfg->nodes) {
    auto rt = cfg->runtime_for(n);
    char cpus[32] = "discover";
    if (n.cpus) std::snprintf(cpus, sizeof cpus, "%g", *n.cpus);
    std::printf("  %c %-12s %s:%u %-6s cpus=%s %s\n", n.name == node ? '*' : ' ',
                n.name.c_str(), n.address.c_str(), static_cast<unsigned>(n.port),
                n.role == node_spec::role_type::head ? "head" : "worker", cpus,
                rt.extra_resources.to_string().c_str());
  }
  auto& as = cfg->autoscaler;
  if (as.enabled())
    std::printf("autoscaler: provider %s, at most %zu starting at once\n",
                as.provider == autoscaler_config::provider_type::local ? "local"
                                                                       : "command",
                as.max_launching);
  for (auto& t : as.node_types)
    std::printf("  type %-12s %s, %zu to %zu node(s), stopped after %lld ms idle\n",
                t.name.c_str(), t.total().to_string().c_str(), t.min, t.max,
                static_cast<long long>(t.idle_timeout.count()));
  // Valid, but not fit to deploy: said last, after what the file describes.
  if (auto why = secret_weakness(cfg->secret); !why.empty()) {
    std::fflush(stdout);
    std::fprintf(stderr, "swarm: %s: cluster.secret %s\n", path.c_str(), why.c_str());
    return 2;
  }
  for (auto [key, token] : {std::pair{"http.token", &cfg->http.token},
                            std::pair{"jobs.token", &cfg->jobs.token}})
    if (auto why = token->empty() ? "" : secret_weakness(*token); !why.empty()) {
      std::fflush(stdout);
      std::fprintf(stderr, "swarm: %s: %s %s\n", path.c_str(), key, why.c_str());
      return 2;
    }
  return 0;
}

} // namespace swarm::tools
