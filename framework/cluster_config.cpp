#include "framework/cluster_config.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include "framework/detail/config_checker.hpp"

namespace swarm {

namespace {

using namespace detail::config;

void read_tls(checker& c, const toml::table& tls, wire_msg::tls_options& out) {
  c.only(tls, "tls", {"mode", "cert", "key", "ca"});
  if (auto m = c.string(tls, "tls", "mode", false)) {
    if (auto mode = wire_msg::tls_mode_of(*m))
      out.use = *mode;
    else
      c.fail(tls.get("mode")->source(), "tls.mode",
             "must be \"auto\" (TLS on connections that leave the host), \"on\" or "
             "\"off\", not '" +
                 *m + "'");
  }
  out.cert = c.string(tls, "tls", "cert", false).value_or("");
  out.key = c.string(tls, "tls", "key", false).value_or("");
  out.ca = c.string(tls, "tls", "ca", false).value_or("");
  auto given = !out.cert.empty() + !out.key.empty() + !out.ca.empty();
  if (given != 0 && given != 3)
    c.fail(tls.source(), "tls",
           "needs cert, key and ca together (this node's certificate, its private key, "
           "and the authority that signs every node's), or none of them for a key "
           "derived from cluster.secret");
  else if (given == 3 && out.use == wire_msg::tls_options::mode::off)
    c.fail(tls.get("mode")->source(), "tls.mode",
           "is \"off\", so cert, key and ca would go unused");
}

void read_cluster(checker& c, const toml::table& root, cluster_config& out) {
  c.only(
      root, "",
      {"autoscaler", "cluster", "code", "http", "jobs", "limits", "log", "node", "tls"});
  auto* cl = table_at(c, root, "cluster");
  if (!cl) {
    c.fail(root.source(), "cluster", "is required ([cluster] with at least `secret`)");
    return;
  }
  c.only(*cl, "cluster",
         {"name", "secret", "gcs_shards", "gcs_replication", "gcs_hosts", "gcs_dir",
          "heartbeat_ms", "node_timeout_ms", "idle_connection_ms", "join_wait_ms",
          "stop_timeout_ms"});
  out.name = c.string(*cl, "cluster", "name", false).value_or("swarm");
  if (auto s = c.string(*cl, "cluster", "secret", true)) {
    if (s->size() < 16)
      c.fail(cl->get("secret")->source(), "cluster.secret",
             "must be at least 16 characters (it authenticates nodes)");
    out.secret = *s;
  }
  out.gcs_shards = static_cast<size_t>(
      c.integer(*cl, "cluster", "gcs_shards", 1, 1024, false).value_or(1));
  out.gcs_replication = static_cast<size_t>(
      c.integer(*cl, "cluster", "gcs_replication", 1, 16, false).value_or(1));
  out.gcs_hosts = static_cast<size_t>(
      c.integer(*cl, "cluster", "gcs_hosts", 1, 1024, false).value_or(1));
  out.gcs_dir = c.string(*cl, "cluster", "gcs_dir", false).value_or("");
  if (out.gcs_dir.find('\0') != std::string::npos)
    c.fail(cl->get("gcs_dir")->source(), "cluster.gcs_dir",
           "must not contain a NUL character");
  out.heartbeat_interval = std::chrono::milliseconds{
      c.integer(*cl, "cluster", "heartbeat_ms", 10, 60000, false).value_or(500)};
  out.node_timeout = std::chrono::milliseconds{
      c.integer(*cl, "cluster", "node_timeout_ms", 50, 600000, false).value_or(2000)};
  out.join_wait = std::chrono::milliseconds{
      c.integer(*cl, "cluster", "join_wait_ms", 0, 3600000, false).value_or(30000)};
  out.stop_timeout = std::chrono::milliseconds{
      c.integer(*cl, "cluster", "stop_timeout_ms", 100, 3600000, false).value_or(20000)};
  if (out.node_timeout <= out.heartbeat_interval)
    c.fail(cl->source(), "cluster.node_timeout_ms",
           "must be longer than cluster.heartbeat_ms");
  // A node's connection to the head carries its heartbeats: never idle that long.
  auto idle_default = std::max<int64_t>(60000, 8 * out.heartbeat_interval.count());
  out.idle_connection = std::chrono::milliseconds{
      c.integer(*cl, "cluster", "idle_connection_ms", 0, 86400000, false)
          .value_or(idle_default)};
  if (auto* idle = cl->get("idle_connection_ms");
      idle && out.idle_connection.count() != 0 &&
      out.idle_connection <= 4 * out.heartbeat_interval)
    c.fail(idle->source(), "cluster.idle_connection_ms",
           "must be 0 (never close) or longer than four times cluster.heartbeat_ms");
  if (auto* code = table_at(c, root, "code")) {
    c.only(*code, "code", {"libraries"});
    if (auto* libs = code->get("libraries")) {
      auto* list = libs->as_array();
      bool ok = list != nullptr;
      for (size_t i = 0; ok && i < list->size(); ++i)
        if (auto s = list->get(i)->value<std::string>(); s && !s->empty())
          out.code_libraries.push_back(*s);
        else
          ok = false;
      if (!ok)
        c.fail(libs->source(), "code.libraries",
               "must be a list of paths to shared libraries, e.g. [\"build/libapp.so\"]");
    }
  }
  if (auto* log = table_at(c, root, "log")) {
    c.only(*log, "log", {"level"});
    if (auto name = c.string(*log, "log", "level", false)) {
      if (auto level = parse_log_level(*name))
        out.verbosity = *level;
      else
        c.fail(log->get("level")->source(), "log.level", "is " + level.err().message);
    }
  }
  if (auto* http = table_at(c, root, "http")) {
    c.only(*http, "http", {"token", "threads", "request_timeout_ms"});
    out.http.token =
        read_token(c, *http, "http", "whoever scrapes the metrics holds it", out.secret);
    out.http.threads = static_cast<size_t>(
        c.integer(*http, "http", "threads", 1, 256, false).value_or(8));
    out.http.request_timeout = std::chrono::milliseconds{
        c.integer(*http, "http", "request_timeout_ms", 100, 600000, false)
            .value_or(5000)};
  }
  if (auto* jobs = table_at(c, root, "jobs")) {
    c.only(*jobs, "jobs", {"token", "run_as"});
    if (!jobs->get("token"))
      c.fail(jobs->source(), "jobs.token",
             "is required: jobs run only for who holds it (leave [jobs] out to turn "
             "them off)");
    out.jobs.token =
        read_token(c, *jobs, "jobs", "every node and job holds the secret", out.secret);
    out.jobs.run_as = c.string(*jobs, "jobs", "run_as", false).value_or("");
    if (!out.jobs.token.empty() && out.jobs.token == out.http.token)
      c.fail(jobs->get("token")->source(), "jobs.token",
             "must differ from http.token (whoever scrapes the metrics holds that)");
  }
  if (auto* tls = table_at(c, root, "tls")) read_tls(c, *tls, out.tls);
  if (auto* lim = table_at(c, root, "limits")) {
    c.only(*lim, "limits",
           {"object_store", "object_pool", "inline_threshold", "max_message", "spill",
            "spill_dir", "spill_limit"});
    if (auto v = c.boolean(*lim, "limits", "spill")) out.spill = *v;
    if (auto v = c.string(*lim, "limits", "spill_dir", false)) out.spill_dir = *v;
    if (auto v = c.bytes(*lim, "limits", "spill_limit", 0, max_object_store))
      out.spill_limit_bytes = *v;
    if (auto v = c.bytes(*lim, "limits", "object_store", 1, max_object_store))
      out.object_store_bytes = *v;
    if (auto v = c.bytes(*lim, "limits", "object_pool", 0, max_object_store))
      out.object_pool_bytes = *v;
    if (auto v = c.bytes(*lim, "limits", "inline_threshold", 1, max_max_message))
      out.inline_threshold = *v;
    if (auto v = c.bytes(*lim, "limits", "max_message", min_max_message, max_max_message))
      out.max_message_bytes = *v;
    // Values up to inline_threshold travel inside messages.
    if (!c.failed() && out.inline_threshold > out.max_message_bytes) {
      auto* at = lim->get("max_message") ? lim->get("max_message")
                                         : lim->get("inline_threshold");
      c.fail(at->source(), "limits.max_message",
             "is " + byte_text(out.max_message_bytes) + ", smaller than " +
                 "limits.inline_threshold (" + byte_text(out.inline_threshold) +
                 "): a value sent inline must fit in a message");
    }
  }
}

void read_nodes(checker& c, const toml::table& root, cluster_config& out) {
  auto* n = root.get("node");
  if (!n || !n->is_array_of_tables() || n->as_array()->empty()) {
    c.fail(n ? n->source() : root.source(), "node",
           "is required: one [[node]] table per node, exactly one with role = \"head\"");
    return;
  }
  std::set<std::string> names, endpoints;
  size_t heads = 0, index = 0;
  for (auto&& entry : *n->as_array()) {
    auto& t = *entry.as_table();
    auto prefix = "node[" + std::to_string(index++) + "]";
    c.only(t, prefix,
           {"name", "address", "port", "role", "cpus", "gpus", "gpu_backend",
            "gpu_sharing", "resources", "metrics_port", "dashboard_port"});
    node_spec spec;
    spec.name = c.string(t, prefix, "name", true).value_or("");
    if (!spec.name.empty())
      prefix = "node[" + std::to_string(index - 1) + "] (" + spec.name + ")";
    if (!spec.name.empty() && !names.insert(spec.name).second)
      c.fail(t.get("name")->source(), prefix + ".name", "repeats another node's name");
    // The node's control store persists in gcs_dir/<name>/.
    if (!out.gcs_dir.empty() &&
        (spec.name == "." || spec.name == ".." ||
         spec.name.find_first_of(std::string{"/\0", 2}) != std::string::npos))
      c.fail(t.get("name")->source(), prefix + ".name",
             "must be usable as a directory name under cluster.gcs_dir (no '/', not '.' "
             "or '..')");
    spec.address = c.string(t, prefix, "address", true).value_or("");
    if (!spec.address.empty()) {
      if (auto ip = resolve_ipv4(spec.address))
        spec.address = *ip;
      else
        c.fail(t.get("address")->source(), prefix + ".address", ip.err().message);
    }
    spec.port =
        static_cast<uint16_t>(c.integer(t, prefix, "port", 1, 65535, true).value_or(0));
    if (!spec.address.empty() && spec.port != 0 &&
        !endpoints.insert(spec.address + ":" + std::to_string(spec.port)).second)
      c.fail(t.get("port")->source(), prefix + ".port",
             spec.address + ":" + std::to_string(spec.port) + " is used by another node");
    // An HTTP port of the node's: on its address, used by nothing else in the file.
    auto http_port = [&](const char* key) -> std::optional<uint16_t> {
      if (!t.get(key)) return std::nullopt;
      auto port =
          static_cast<uint16_t>(c.integer(t, prefix, key, 1, 65535, false).value_or(0));
      if (port == spec.port ||
          (!spec.address.empty() && port &&
           !endpoints.insert(spec.address + ":" + std::to_string(port)).second))
        c.fail(t.get(key)->source(), prefix + "." + key,
               spec.address + ":" + std::to_string(port) +
                   " is used by another node or port");
      return port;
    };
    spec.metrics_port = http_port("metrics_port");
    spec.dashboard_port = http_port("dashboard_port");
    auto role = c.string(t, prefix, "role", false).value_or("worker");
    if (role == "head") {
      spec.role = node_spec::role_type::head;
      ++heads;
    } else if (role != "worker") {
      c.fail(t.get("role")->source(), prefix + ".role",
             "must be \"head\" or \"worker\", got \"" + role + "\"");
    }
    if (spec.dashboard_port && spec.role != node_spec::role_type::head)
      c.fail(t.get("dashboard_port")->source(), prefix + ".dashboard_port",
             "only the head serves the dashboard");
    if (auto cpus = c.amount(t, prefix, "cpus", false, max_cpus)) {
      if (*cpus && **cpus == 0)
        c.fail(t.get("cpus")->source(), prefix + ".cpus",
               "must be positive or \"discover\"");
      spec.cpus = *cpus;
    }
    if (auto gpus = c.amount(t, prefix, "gpus", true, static_cast<double>(max_gpus)))
      if (*gpus) spec.gpus = static_cast<size_t>(**gpus);
    spec.gpu_backend = c.string(t, prefix, "gpu_backend", false).value_or("");
    if (!spec.gpu_backend.empty() && spec.gpu_backend != "cuda" &&
        spec.gpu_backend != "host")
      c.fail(t.get("gpu_backend")->source(), prefix + ".gpu_backend",
             "must be \"cuda\" or \"host\", got \"" + spec.gpu_backend + "\"");
    else if (spec.gpu_backend == "host" && (!spec.gpus || *spec.gpus == 0))
      c.fail(t.get("gpu_backend")->source(), prefix + ".gpu_backend",
             "\"host\" simulates the node's `gpus`: give their number");
    if (auto v = c.boolean(t, prefix, "gpu_sharing")) spec.gpu_sharing = *v;
    spec.resources = c.resources(t, prefix);
    out.nodes.push_back(std::move(spec));
  }
  if (heads != 1)
    c.fail(n->source(), "node",
           "exactly one node must have role = \"head\", found " + std::to_string(heads));
  if (out.gcs_replication > out.nodes.size())
    c.fail(root.source(), "cluster.gcs_replication",
           "is " + std::to_string(out.gcs_replication) + " but the cluster has only " +
               std::to_string(out.nodes.size()) + " node(s)");
  if (out.gcs_hosts > 1) {
    if (out.gcs_hosts > out.nodes.size())
      c.fail(root.source(), "cluster.gcs_hosts",
             "is " + std::to_string(out.gcs_hosts) + " but the cluster has only " +
                 std::to_string(out.nodes.size()) + " node(s)");
    if (out.gcs_replication < 2)
      c.fail(root.source(), "cluster.gcs_hosts",
             "is " + std::to_string(out.gcs_hosts) +
                 ": shards served by other nodes need gcs_replication >= 2, so that a "
                 "lost node's shards move to another with their rows");
    if (!out.gcs_dir.empty())
      c.fail(root.source(), "cluster.gcs_hosts",
             "is " + std::to_string(out.gcs_hosts) +
                 ": the key-value shards it spreads are kept in memory (replicated), "
                 "not persisted: remove gcs_dir or set gcs_hosts = 1");
  }
}

void read_autoscaler(checker& c, const toml::table& root, cluster_config& out) {
  auto* as = table_at(c, root, "autoscaler");
  if (!as) return;
  auto& a = out.autoscaler;
  c.only(*as, "autoscaler",
         {"provider", "start_command", "stop_command", "launch_timeout_ms",
          "max_launching", "upscaling_speed", "retry_after_ms", "node_type"});
  auto provider = c.string(*as, "autoscaler", "provider", false).value_or("local");
  if (provider == "command")
    a.provider = autoscaler_config::provider_type::command;
  else if (provider != "local")
    c.fail(as->get("provider")->source(), "autoscaler.provider",
           "must be \"local\" or \"command\", got \"" + provider + "\"");
  a.start_command = c.string(*as, "autoscaler", "start_command", false).value_or("");
  a.stop_command = c.string(*as, "autoscaler", "stop_command", false).value_or("");
  if (a.provider == autoscaler_config::provider_type::command &&
      (a.start_command.empty() || a.stop_command.empty()))
    c.fail(as->source(), "autoscaler",
           "provider \"command\" needs start_command and stop_command");
  a.launch_timeout = std::chrono::milliseconds{
      c.integer(*as, "autoscaler", "launch_timeout_ms", 1000, 3600000, false)
          .value_or(120000)};
  a.max_launching = static_cast<size_t>(
      c.integer(*as, "autoscaler", "max_launching", 1, 1000, false).value_or(2));
  a.upscaling_speed =
      c.number(*as, "autoscaler", "upscaling_speed", 0, 100).value_or(1.0);
  a.retry_after = std::chrono::milliseconds{
      c.integer(*as, "autoscaler", "retry_after_ms", 10, 600000, false).value_or(2000)};
  auto* types = as->get("node_type");
  if (!types || !types->is_array_of_tables() || types->as_array()->empty()) {
    c.fail(types ? types->source() : as->source(), "autoscaler.node_type",
           "is required: one [[autoscaler.node_type]] per kind of node it starts");
    return;
  }
  std::set<std::string> names;
  size_t index = 0;
  for (auto&& entry : *types->as_array()) {
    auto& t = *entry.as_table();
    auto prefix = "autoscaler.node_type[" + std::to_string(index++) + "]";
    c.only(t, prefix,
           {"name", "cpus", "gpus", "resources", "min", "max", "idle_timeout_ms"});
    node_type nt;
    nt.name = c.string(t, prefix, "name", true).value_or("");
    if (!nt.name.empty() && !names.insert(nt.name).second)
      c.fail(t.get("name")->source(), prefix + ".name", "repeats another type's name");
    if (auto* n = t.get("cpus")) {
      auto v = n->is_integer() ? static_cast<double>(*n->value<int64_t>())
                               : n->value<double>().value_or(-1);
      if (!(v > 0 && v <= max_cpus))
        c.fail(n->source(), prefix + ".cpus",
               "must be a number between 0 and " + number_text(max_cpus) + ", not 0");
      else
        nt.cpus = v;
    }
    nt.gpus = static_cast<size_t>(
        c.integer(t, prefix, "gpus", 0, max_gpus, false).value_or(0));
    nt.resources = c.resources(t, prefix);
    nt.min = static_cast<size_t>(c.integer(t, prefix, "min", 0, 10000, false).value_or(0));
    nt.max = static_cast<size_t>(c.integer(t, prefix, "max", 0, 10000, false).value_or(1));
    if (nt.min > nt.max)
      c.fail(t.source(), prefix + ".min",
             "is " + std::to_string(nt.min) + ", more than max (" +
                 std::to_string(nt.max) + ")");
    nt.idle_timeout = std::chrono::milliseconds{
        c.integer(t, prefix, "idle_timeout_ms", 100, 86400000, false).value_or(60000)};
    a.node_types.push_back(std::move(nt));
  }
}

} // namespace

resource_set node_type::total() const {
  auto out = resources;
  out.set("CPU", cpus);
  if (gpus > 0) out.set("GPU", static_cast<double>(gpus));
  return out;
}

size_t autoscaler_config::launch_cap(size_t live) const {
  auto by_size =
      static_cast<size_t>(std::ceil(upscaling_speed * static_cast<double>(live)));
  return std::max(max_launching, by_size);
}

std::optional<size_t> parse_byte_size(std::string_view text) {
  size_t i = 0;
  while (i < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
    ++i;
  if (i == 0) return std::nullopt;
  double value = 0;
  try {
    size_t used = 0;
    value = std::stod(std::string{text.substr(0, i)}, &used);
    if (used != i) return std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
  auto unit = text.substr(i);
  while (!unit.empty() && unit.front() == ' ')
    unit.remove_prefix(1);
  double scale = 0;
  if (unit.empty() || unit == "B")
    scale = 1;
  else if (unit == "KiB")
    scale = 1024.0;
  else if (unit == "MiB")
    scale = 1024.0 * 1024;
  else if (unit == "GiB")
    scale = 1024.0 * 1024 * 1024;
  else if (unit == "TiB")
    scale = 1024.0 * 1024 * 1024 * 1024;
  else if (unit == "PiB")
    scale = 1024.0 * 1024 * 1024 * 1024 * 1024;
  else if (unit == "KB")
    scale = 1e3;
  else if (unit == "MB")
    scale = 1e6;
  else if (unit == "GB")
    scale = 1e9;
  else
    return std::nullopt;
  double bytes = value * scale;
  if (!std::isfinite(bytes) || bytes >= 1.8e19) return std::nullopt;
  return static_cast<size_t>(bytes);
}

result<cluster_config> parse_cluster_config(std::string_view text,
                                            const std::string& source_name) {
  // Checked here, not left to toml++: 3.3.0 can reach its "unreachable" marker on some
  // invalid UTF-8.
  if (auto at = invalid_utf8_at(text); at != std::string_view::npos) {
    auto before = text.substr(0, at);
    auto line = 1 + std::count(before.begin(), before.end(), '\n');
    auto line_start = before.rfind('\n');
    auto column = at - (line_start == std::string_view::npos ? 0 : line_start + 1) + 1;
    return error{errc::invalid_argument,
                 source_name + ":" + std::to_string(line) + ":" + std::to_string(column) +
                     ": not valid UTF-8 at byte offset " + std::to_string(at)};
  }
  toml::table root;
  try {
    root = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    std::ostringstream out;
    out << source_name << ':' << e.source().begin.line << ':' << e.source().begin.column
        << ": not valid TOML: " << e.description();
    return error{errc::invalid_argument, out.str()};
  }
  checker c{source_name};
  cluster_config out;
  read_cluster(c, root, out);
  read_nodes(c, root, out);
  read_autoscaler(c, root, out);
  if (c.failed()) return c.err();
  return out;
}

result<cluster_config> load_cluster_config(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  if (!in) return error{errc::invalid_argument, path + ": cannot open the cluster file"};
  std::ostringstream text;
  text << in.rdbuf();
  auto cfg = parse_cluster_config(text.str(), path);
  // Libraries and certificates are found from the file's folder.
  if (cfg) {
    std::vector<std::string*> paths{&cfg->tls.cert, &cfg->tls.key, &cfg->tls.ca};
    for (auto& lib : cfg->code_libraries)
      paths.push_back(&lib);
    for (auto* p : paths)
      if (!p->empty() && std::filesystem::path{*p}.is_relative())
        *p = (std::filesystem::path{path}.parent_path() / *p).lexically_normal().string();
  }
  return cfg;
}

result<const node_spec*> cluster_config::find(const std::string& node_name) const {
  std::string known;
  for (auto& n : nodes) {
    if (n.name == node_name) return &n;
    known += (known.empty() ? "" : ", ") + n.name;
  }
  return error{errc::invalid_argument, "no node named '" + node_name +
                                           "' in the cluster file (nodes: " + known +
                                           ")"};
}

const node_spec& cluster_config::head() const {
  for (auto& n : nodes)
    if (n.role == node_spec::role_type::head) return n;
  throw failure{{errc::invalid_argument, "the cluster has no head node"}};
}

runtime_config cluster_config::runtime_for(const node_spec& n) const {
  runtime_config cfg;
  cfg.cpus = n.cpus;
  cfg.extra_resources = n.resources;
  if (n.gpus) cfg.extra_resources.set("GPU", static_cast<double>(*n.gpus));
  cfg.gpu_backend = n.gpu_backend;
  // `gpus = 0` (and a client): none used, even where devices are found.
  if (n.gpus && *n.gpus == 0 && n.gpu_backend.empty()) cfg.gpu_backend = "none";
  cfg.gpu_sharing = n.gpu_sharing;
  if (object_store_bytes > 0) cfg.object_store_bytes = object_store_bytes;
  cfg.object_pool_bytes = object_pool_bytes;
  cfg.inline_threshold = inline_threshold;
  cfg.spill = spill;
  cfg.spill_dir = spill_dir;
  cfg.spill_limit_bytes = spill_limit_bytes;
  // Every node runs every shard: the head's hold the tables, the others' are members of
  // their chains (gcs_replication). Only the head persists them.
  cfg.gcs_shards = gcs_shards;
  if (!n.client) cfg.gcs_hosts = gcs_hosts;
  cfg.verbosity = verbosity;
  cfg.metrics_port = n.metrics_port;
  cfg.metrics_address = n.address;
  cfg.http = http;
  if (n.role == node_spec::role_type::head && !gcs_dir.empty())
    cfg.gcs_dir = gcs_dir + "/" + n.name;
  return cfg;
}

} // namespace swarm
