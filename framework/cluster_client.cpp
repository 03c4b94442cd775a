#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <set>

#include "framework/cluster.hpp"
#include "framework/detail/wire_convert.hpp"
#include "transport/endpoint.hpp"

namespace swarm {

namespace {

/// A short-lived client connection to one node of a cluster: authenticates with the
/// cluster secret, sends one message and waits for one answer.
class cluster_client {
public:
  explicit cluster_client(const cluster_config& cfg)
      : cluster_client(cfg.secret, cfg.max_message_bytes) {}

  cluster_client(const std::string& secret, size_t max_message_bytes) {
    wire_msg::endpoint_config ec;
    ec.name = "swarm-client-" + std::to_string(::getpid());
    ec.secret = secret;
    ec.listen = false;
    // Status and stop requests move no objects.
    ec.bulk_connection = false;
    ec.max_frame_bytes = max_message_bytes;
    wire_msg::endpoint_handlers h;
    h.on_message = [this](const std::string&, wire_msg::message&& m) {
      std::lock_guard<std::mutex> guard{mtx_};
      got_ = std::move(m);
      cv_.notify_all();
    };
    auto ep = wire_msg::endpoint::start(ec, std::move(h));
    if (!ep) throw failure{ep.err()};
    net_ = std::move(*ep);
  }

  /// The peer name of node `n`, connected.
  result<std::string> connect(const node_spec& n, std::chrono::milliseconds timeout) {
    auto peer = net_->connect(n.address, n.port, timeout);
    if (!peer)
      return error{peer.err().code, "node '" + n.name + "' at " + n.address + ":" +
                                        std::to_string(n.port) + ": " +
                                        peer.err().message};
    return peer;
  }

  /// The peer name of whatever listens at `address:port`, connected.
  result<std::string> connect(const std::string& address, uint16_t port,
                              std::chrono::milliseconds timeout) {
    auto peer = net_->connect(address, port, timeout);
    if (!peer)
      return error{peer.err().code, "the cluster at " + address + ":" +
                                        std::to_string(port) + ": " + peer.err().message};
    return peer;
  }

  result<void> send(const node_spec& n, const wire_msg::message& m,
                    std::chrono::milliseconds timeout) {
    auto peer = connect(n, timeout);
    if (!peer) return peer.err();
    return net_->send(*peer, m);
  }

  /// Sends `m` to `peer` and waits for the answer.
  std::optional<wire_msg::message> ask(const std::string& peer,
                                       const wire_msg::message& m,
                                       std::chrono::milliseconds timeout) {
    if (!net_->send(peer, m)) return std::nullopt;
    return wait(timeout);
  }

  std::optional<wire_msg::message> wait(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> guard{mtx_};
    cv_.wait_for(guard, timeout, [this] { return got_.has_value(); });
    auto out = std::move(got_);
    got_.reset();
    return out;
  }

private:
  std::mutex mtx_;
  std::condition_variable cv_;
  std::optional<wire_msg::message> got_;
  std::unique_ptr<wire_msg::endpoint> net_;
};

} // namespace

size_t cluster_state::alive() const {
  return static_cast<size_t>(std::count_if(nodes.begin(), nodes.end(),
                                           [](auto& n) { return n.alive && !n.client; }));
}

result<cluster_config> client_cluster(const client_options& o) {
  auto where = o.address + ":" + std::to_string(o.port);
  if (o.address.empty() || o.port == 0)
    return error{errc::invalid_argument,
                 "a client needs the head's address and port, got '" + where + "'"};
  cluster_client c{o.secret, cluster_config{}.max_message_bytes};
  auto head = c.connect(o.address, o.port, o.timeout);
  if (!head) return head.err();
  auto answer = c.ask(*head, wire_msg::client_ask{1}, o.timeout);
  if (!answer)
    return error{errc::timeout, "node '" + *head + "' at " + where +
                                    " sent no answer to a client within " +
                                    std::to_string(o.timeout.count()) + " ms"};
  auto* w = std::get_if<wire_msg::client_welcome>(&*answer);
  if (!w)
    return error{errc::invalid_argument,
                 "node '" + *head + "' at " + where + " is not the head of its cluster"};
  if (!w->ok)
    return error{errc::invalid_argument, "the head '" + *head + "' at " + where +
                                             " refused the client: " + w->error};
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  cluster_config cfg;
  cfg.name = w->cluster;
  cfg.secret = o.secret;
  cfg.heartbeat_interval = std::chrono::milliseconds(w->heartbeat_ms);
  cfg.node_timeout = std::chrono::milliseconds(w->node_timeout_ms);
  cfg.join_wait = std::chrono::milliseconds(w->join_wait_ms);
  cfg.gcs_shards = w->gcs_shards;
  cfg.gcs_replication = w->gcs_replication;
  cfg.inline_threshold = w->inline_threshold;
  cfg.max_message_bytes = w->max_message_bytes;
  for (auto& n : w->nodes) {
    node_spec s;
    s.name = n.name;
    // The head as this client reached it: its file's address may not route from here.
    s.address = n.name == *head ? o.address : n.address;
    s.port = n.name == *head ? o.port : n.port;
    s.role = n.head ? node_spec::role_type::head : node_spec::role_type::worker;
    cfg.nodes.push_back(std::move(s));
  }
  node_spec me;
  me.name = o.name.empty()
                ? "client-" + std::string{host} + "-" + std::to_string(::getpid())
                : o.name;
  for (auto& n : cfg.nodes)
    if (n.name == me.name)
      return error{errc::invalid_argument, "the client's name '" + me.name +
                                               "' is a node of cluster '" + cfg.name +
                                               "'"};
  me.address = "127.0.0.1"; // not listening: nobody dials a client
  me.cpus = 0;
  me.gpus = 0;
  me.client = true;
  me.owner_index = w->owner_index;
  cfg.nodes.push_back(std::move(me));
  return cfg;
}

result<cluster_state> cluster_status(const cluster_config& cfg,
                                     std::chrono::milliseconds timeout) {
  cluster_client c{cfg};
  if (auto ok = c.send(cfg.head(), wire_msg::status_request{1}, timeout); !ok)
    return ok.err();
  auto answer = c.wait(timeout);
  auto* table = answer ? std::get_if<wire_msg::node_table>(&*answer) : nullptr;
  if (!table)
    return error{errc::node_unreachable, "the head '" + cfg.head().name +
                                             "' sent no node table within " +
                                             std::to_string(timeout.count()) + " ms"};
  cluster_state out;
  for (auto& j : table->jobs)
    out.jobs.push_back({j.id, j.driver, j.pid, j.running, j.started_ms, j.ended_ms});
  for (auto& n : table->nodes) {
    node_status s;
    s.name = n.name;
    s.address = n.address;
    s.port = n.port;
    s.head = n.head;
    s.client = n.client;
    s.alive = n.alive;
    s.total = detail::from_list(n.total).value();
    s.available = detail::from_list(n.available).value();
    // The node reports the tasks placed there and not finished, running ones included.
    s.queued = n.queued > n.running ? n.queued - n.running : 0;
    s.running = n.running;
    s.last_seen_ms = n.last_seen_ms;
    s.store_bytes = n.store.bytes;
    s.store_capacity = n.store.capacity;
    s.pulled_bytes = n.store.pulled;
    s.pooled_bytes = n.store.pooled;
    s.pool_reuses = n.store.pool_reuses;
    s.spilled_bytes = n.store.spilled;
    s.spills = n.store.spills;
    s.restores = n.store.restores;
    s.cache_hits = n.store.hits;
    s.cache_misses = n.store.misses;
    s.evictions = n.store.evictions;
    s.by_priority = n.by_priority;
    out.nodes.push_back(std::move(s));
  }
  return out;
}

result<std::vector<listed>> list_cluster(const cluster_config& cfg,
                                         const std::string& what, const std::string& node,
                                         std::chrono::milliseconds timeout) {
  static const std::set<std::string> lists{"tasks", "actors",  "objects", "timeline",
                                           "logs",  "summary", "failures"};
  if (!lists.count(what))
    return error{errc::invalid_argument,
                 "cannot list '" + what +
                     "': lists are tasks, actors, objects, timeline, logs, summary and "
                     "failures"};
  if (!node.empty())
    if (auto n = cfg.find(node); !n) return n.err();
  auto state = cluster_status(cfg, timeout);
  if (!state) return state.err();
  std::vector<listed> out;
  for (auto& n : state->nodes) {
    if (!n.alive || (!node.empty() && n.name != node)) continue;
    if (!cfg.find(n.name)) continue; // not in this file
    auto answer = list_node(cfg, n.name, {{what, 0}}, timeout);
    if (!answer) return answer.err();
    auto& rows = answer->front().rows;
    out.insert(out.end(), std::make_move_iterator(rows.begin()),
               std::make_move_iterator(rows.end()));
  }
  return out;
}

result<std::vector<node_list>> list_node(const cluster_config& cfg,
                                         const std::string& node,
                                         const std::vector<list_query>& queries,
                                         std::chrono::milliseconds timeout) {
  auto spec = cfg.find(node);
  if (!spec) return spec.err();
  cluster_client c{cfg};
  auto peer = c.connect(**spec, timeout);
  if (!peer) return peer.err();
  std::vector<node_list> out;
  uint64_t request = 0;
  for (auto& q : queries) {
    auto answer =
        c.ask(*peer, wire_msg::list_request{++request, q.what, q.limit}, timeout);
    auto* reply = answer ? std::get_if<wire_msg::list_reply>(&*answer) : nullptr;
    if (!reply || reply->request_id != request)
      return error{errc::node_unreachable, "node '" + node + "' sent no list of its " +
                                               q.what + " within " +
                                               std::to_string(timeout.count()) + " ms"};
    node_list l;
    l.total = reply->total;
    for (auto& r : reply->rows)
      l.rows.push_back({reply->node, r.id, r.name, r.state, r.detail, r.numbers});
    out.push_back(std::move(l));
  }
  return out;
}

result<client_options> client_options_from_env() {
  const char* address = std::getenv("SWARM_ADDRESS");
  const char* secret = std::getenv("SWARM_SECRET");
  if (!address || !*address)
    return error{errc::invalid_argument,
                 "SWARM_ADDRESS is not set: this program was not started by `swarm job "
                 "submit` (or give the head's host:port)"};
  if (!secret) return error{errc::invalid_argument, "SWARM_SECRET is not set"};
  std::string a{address};
  auto colon = a.rfind(':');
  unsigned long port = 0;
  try {
    if (colon != std::string::npos) port = std::stoul(a.substr(colon + 1));
  } catch (const std::exception&) {
    port = 0;
  }
  if (colon == std::string::npos || colon == 0 || port == 0 || port > 65535)
    return error{errc::invalid_argument,
                 "SWARM_ADDRESS must be host:port, got '" + a + "'"};
  client_options o;
  o.address = a.substr(0, colon);
  o.port = static_cast<uint16_t>(port);
  o.secret = secret;
  return o;
}

namespace {

job_state state_of(const wire_msg::job_row& r) {
  return {r.id, r.command, r.pid, r.state, r.exit_code, r.started_ms, r.ended_ms};
}

// Sends `m` to the head of `cfg` and waits for its job answer.
result<wire_msg::job_answer> ask_jobs(const cluster_config& cfg, wire_msg::message m,
                                      std::chrono::milliseconds timeout) {
  cluster_client c{cfg};
  auto head = c.connect(cfg.head(), timeout);
  if (!head) return head.err();
  auto got = c.ask(*head, m, timeout);
  auto* a = got ? std::get_if<wire_msg::job_answer>(&*got) : nullptr;
  if (!a)
    return error{errc::timeout, "the head '" + cfg.head().name +
                                    "' did not answer within " +
                                    std::to_string(timeout.count()) + " ms"};
  if (!a->ok)
    return error{errc::invalid_argument,
                 "the head '" + cfg.head().name + "': " + a->error};
  return std::move(*a);
}

} // namespace

result<job_state> submit_job(const cluster_config& cfg,
                             const std::vector<std::string>& argv, const std::string& cwd,
                             std::chrono::milliseconds timeout) {
  auto a = ask_jobs(cfg, wire_msg::job_submit{1, argv, cwd}, timeout);
  if (!a) return a.err();
  return state_of(a->jobs.at(0));
}

result<std::vector<job_state>> list_jobs(const cluster_config& cfg, uint64_t id,
                                         std::chrono::milliseconds timeout) {
  auto a = ask_jobs(
      cfg, wire_msg::job_ask{1, wire_msg::job_ask::kind_type::status, id, 0}, timeout);
  if (!a) return a.err();
  std::vector<job_state> out;
  for (auto& r : a->jobs)
    out.push_back(state_of(r));
  return out;
}

result<job_output> job_output_from(const cluster_config& cfg, uint64_t id,
                                   uint64_t offset, std::chrono::milliseconds timeout) {
  auto a = ask_jobs(
      cfg, wire_msg::job_ask{1, wire_msg::job_ask::kind_type::output, id, offset},
      timeout);
  if (!a) return a.err();
  return job_output{state_of(a->jobs.at(0)),
                    std::string(a->output.begin(), a->output.end()), a->output_end};
}

result<job_state> stop_job(const cluster_config& cfg, uint64_t id,
                           std::chrono::milliseconds timeout) {
  auto a = ask_jobs(cfg, wire_msg::job_ask{1, wire_msg::job_ask::kind_type::stop, id, 0},
                    timeout);
  if (!a) return a.err();
  return state_of(a->jobs.at(0));
}

result<void> stop_cluster(const cluster_config& cfg, const std::string& node,
                          std::chrono::milliseconds timeout) {
  const node_spec* target = &cfg.head();
  if (!node.empty()) {
    auto n = cfg.find(node);
    if (!n) return n.err();
    target = *n;
  }
  cluster_client c{cfg};
  auto sent = c.send(*target, wire_msg::stop_request{node, {}}, timeout);
  if (sent || !node.empty()) return sent;
  // The head is gone: every other node of the file is asked itself.
  size_t reached = 0;
  for (auto& n : cfg.nodes)
    if (n.role != node_spec::role_type::head &&
        c.send(n, wire_msg::stop_request{n.name, {}}, timeout))
      ++reached;
  if (reached == 0)
    return error{sent.err().code,
                 sent.err().message + "; no other node of the file answered"};
  return {};
}

} // namespace swarm
