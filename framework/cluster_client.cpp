#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include "framework/cluster.hpp"
#include "framework/detail/wire_convert.hpp"
#include "framework/tls_env.hpp"
#include "transport/endpoint.hpp"

namespace swarm {

namespace {

// "-" and 8 random hex digits: names a process's connections apart.
std::string unique_suffix() {
  std::random_device rd;
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "-%08x", rd());
  return suffix;
}

/// A short-lived client connection to one node of a cluster: authenticates with the
/// cluster secret, sends one message and waits for one answer.
class cluster_client {
public:
  explicit cluster_client(const cluster_config& cfg)
      : cluster_client(cfg.secret, cfg.max_message_bytes, cfg.tls) {}

  cluster_client(const std::string& secret, size_t max_message_bytes,
                 const wire_msg::tls_options& tls) {
    wire_msg::endpoint_config ec;
    // Its own name: another query of this process (a status poll, the dashboard) may
    // still be connected, and the answers to that one are not this one's.
    ec.name = "swarm-client-" + std::to_string(::getpid()) + unique_suffix();
    ec.secret = secret;
    ec.tls = tls;
    ec.listen = false;
    // Status and stop requests move no objects.
    ec.bulk_connection = false;
    ec.max_frame_bytes = max_message_bytes;
    wire_msg::endpoint_handlers h;
    h.on_message = [this](const std::string&, wire_msg::message&& m) {
      std::lock_guard<std::mutex> guard{mtx_};
      got_.push_back(std::move(m));
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

  /// Sends `m` to `peer` and waits for its answer, an `Answer`.
  template <class Answer>
  std::optional<Answer> ask(const std::string& peer, const wire_msg::message& m,
                            std::chrono::milliseconds timeout) {
    if (!net_->send(peer, m)) return std::nullopt;
    return wait<Answer>(timeout);
  }

  /// The first `Answer` to arrive within `timeout`; messages of other kinds are dropped.
  template <class Answer> std::optional<Answer> wait(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    std::unique_lock<std::mutex> guard{mtx_};
    while (cv_.wait_until(guard, deadline, [this] { return !got_.empty(); })) {
      auto m = std::move(got_.front());
      got_.pop_front();
      if (auto* a = std::get_if<Answer>(&m)) return std::move(*a);
    }
    return std::nullopt;
  }

private:
  // Guards got_ (with cv_): the endpoint's I/O thread adds answers, the asking thread
  // waits; a short-lived client, with no actor system.
  std::mutex mtx_;
  std::condition_variable cv_;
  std::deque<wire_msg::message> got_;
  std::unique_ptr<wire_msg::endpoint> net_;
};

} // namespace

size_t cluster_state::alive() const {
  return static_cast<size_t>(std::count_if(nodes.begin(), nodes.end(),
                                           [](auto& n) { return n.alive && !n.client; }));
}

namespace {

std::string host_name() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

// This host's address on the route to `address:port`: what a node that joins by the
// head's address advertises when told none. A UDP socket's connect sends nothing.
result<std::string> address_toward(const std::string& address, uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  auto where = address + ":" + std::to_string(port);
  if (int rc = ::getaddrinfo(address.c_str(), std::to_string(port).c_str(), &hints, &found);
      rc != 0)
    return error{errc::invalid_argument,
                 "cannot resolve the head's address " + where + ": " + ::gai_strerror(rc)};
  std::string out;
  for (auto* a = found; a && out.empty(); a = a->ai_next) {
    int fd = ::socket(a->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    sockaddr_storage local{};
    socklen_t len = sizeof local;
    char text[INET6_ADDRSTRLEN] = {};
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0) {
      const void* ip = local.ss_family == AF_INET6
                           ? static_cast<const void*>(
                                 &reinterpret_cast<sockaddr_in6*>(&local)->sin6_addr)
                           : &reinterpret_cast<sockaddr_in*>(&local)->sin_addr;
      if (::inet_ntop(local.ss_family, ip, text, sizeof text)) out = text;
    }
    ::close(fd);
  }
  ::freeaddrinfo(found);
  if (out.empty())
    return error{errc::node_unreachable, "no route from this host to the head at " + where};
  return out;
}

// Asks the head at `o`'s address to let `name` join (a `worker` node, or a client);
// the cluster as it describes it, without the one joining.
result<std::pair<cluster_config, uint32_t>>
ask_to_join(const client_options& o, const std::string& name, bool worker) {
  auto where = o.address + ":" + std::to_string(o.port);
  if (o.address.empty() || o.port == 0)
    return error{errc::invalid_argument, std::string{worker ? "a node" : "a client"} +
                                             " needs the head's address and port, got '" +
                                             where + "'"};
  cluster_client c{o.secret, cluster_config{}.max_message_bytes, o.tls};
  auto head = c.connect(o.address, o.port, o.timeout);
  if (!head) return head.err();
  auto w = c.ask<wire_msg::client_welcome>(*head, wire_msg::client_ask{1, name, worker},
                                           o.timeout);
  if (!w)
    return error{errc::timeout, "node '" + *head + "' at " + where +
                                    " sent no answer to a client within " +
                                    std::to_string(o.timeout.count()) +
                                    " ms (is it the head of its cluster?)"};
  if (!w->ok)
    return error{errc::invalid_argument,
                 "the head '" + *head + "' at " + where + " refused " +
                     (worker ? "node '" + name + "'" : std::string{"the client"}) + ": " +
                     w->error};
  cluster_config cfg;
  cfg.name = w->cluster;
  cfg.secret = o.secret;
  cfg.tls = o.tls;
  cfg.heartbeat_interval = std::chrono::milliseconds(w->heartbeat_ms);
  cfg.node_timeout = std::chrono::milliseconds(w->node_timeout_ms);
  cfg.idle_connection = std::chrono::milliseconds(w->idle_connection_ms);
  cfg.join_wait = std::chrono::milliseconds(w->join_wait_ms);
  cfg.gcs_shards = w->gcs_shards;
  cfg.gcs_replication = w->gcs_replication;
  cfg.inline_threshold = w->inline_threshold;
  cfg.max_message_bytes = w->max_message_bytes;
  for (auto& n : w->nodes) {
    node_spec s;
    s.name = n.name;
    // The head as this one reached it: its file's address may not route from here.
    s.address = n.name == *head ? o.address : n.address;
    s.port = n.name == *head ? o.port : n.port;
    s.role = n.head ? node_spec::role_type::head : node_spec::role_type::worker;
    cfg.nodes.push_back(std::move(s));
  }
  for (auto& n : cfg.nodes)
    if (n.name == name)
      return error{errc::invalid_argument,
                   std::string{worker ? "the node's" : "the client's"} + " name '" + name +
                       "' is a node of cluster '" + cfg.name + "'" +
                       (worker ? ": start it with the cluster file and --node" : "")};
  return std::pair{std::move(cfg), w->owner_index};
}

} // namespace

result<cluster_config> client_cluster(const client_options& o) {
  // A process that connects again (a driver's second session) is another client: the
  // cluster may still hold the first, leaving, under its name.
  auto name = o.name.empty() ? "client-" + host_name() + "-" +
                                   std::to_string(::getpid()) + unique_suffix()
                             : o.name;
  auto joined = ask_to_join(o, name, false);
  if (!joined) return joined.err();
  auto& [cfg, owner_index] = *joined;
  node_spec me;
  me.name = name;
  me.address = "127.0.0.1"; // not listening: nobody dials a client
  me.cpus = 0;
  me.gpus = 0;
  me.client = true;
  me.owner_index = owner_index;
  cfg.nodes.push_back(std::move(me));
  return std::move(cfg);
}

result<cluster_config> join_cluster(const join_options& o) {
  auto me = o.node;
  me.name = o.head.name.empty()
                ? "node-" + host_name() + "-" + std::to_string(::getpid())
                : o.head.name;
  if (me.address.empty()) {
    auto here = address_toward(o.head.address, o.head.port);
    if (!here) return here.err();
    me.address = *here;
  }
  auto joined = ask_to_join(o.head, me.name, true);
  if (!joined) return joined.err();
  auto& [cfg, owner_index] = *joined;
  me.role = node_spec::role_type::worker;
  me.client = false;
  me.owner_index = owner_index;
  cfg.nodes.push_back(std::move(me));
  return std::move(cfg);
}

result<cluster_state> cluster_status(const cluster_config& cfg,
                                     std::chrono::milliseconds timeout) {
  cluster_client c{cfg};
  if (auto ok = c.send(cfg.head(), wire_msg::status_request{1}, timeout); !ok)
    return ok.err();
  auto table = c.wait<wire_msg::node_table>(timeout);
  if (!table)
    return error{errc::node_unreachable, "the head '" + cfg.head().name +
                                             "' sent no node table within " +
                                             std::to_string(timeout.count()) + " ms"};
  cluster_state out;
  for (auto& j : table->jobs)
    out.jobs.push_back({j.id, j.driver, j.pid, j.running, j.started_ms, j.ended_ms});
  for (auto& l : table->launches)
    out.launches.push_back({l.name, l.type, l.state, l.why, l.since_ms});
  for (auto& chain : table->kv_shards) {
    if (out.kv_shards.size() <= chain.shard) out.kv_shards.resize(chain.shard + 1);
    out.kv_shards[chain.shard] = chain.members;
  }
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
    s.stop_report = n.stop_report;
    out.nodes.push_back(std::move(s));
  }
  return out;
}

namespace {

// Where the head says node `n` is reached.
node_spec reached_at(const node_status& n) {
  node_spec s;
  s.name = n.name;
  s.address = n.address;
  s.port = n.port;
  return s;
}

// Node `node` of the cluster: the file's row, else the head's (one that joined by the
// address of the head); an error naming the nodes there are when neither has it.
result<node_spec> node_of(const cluster_config& cfg, const cluster_state& state,
                          const std::string& node) {
  if (auto spec = cfg.find(node)) return **spec;
  std::string names;
  for (auto& n : state.nodes) {
    if (n.client) continue;
    if (n.name == node) return reached_at(n);
    names += (names.empty() ? "" : ", ") + n.name;
  }
  return error{errc::invalid_argument, "no node named '" + node + "' in cluster '" +
                                           cfg.name + "' (nodes: " + names + ")"};
}

// Where node `node` is reached: `node_of`, asking the head only when the file has none.
result<node_spec> address_of(const cluster_config& cfg, const std::string& node,
                             std::chrono::milliseconds timeout) {
  if (auto spec = cfg.find(node)) return **spec;
  auto state = cluster_status(cfg, timeout);
  if (!state) return state.err();
  return node_of(cfg, *state, node);
}

result<std::vector<node_list>> list_at(const cluster_config& cfg, const node_spec& at,
                                       const std::vector<list_query>& queries,
                                       std::chrono::milliseconds timeout) {
  auto& node = at.name;
  cluster_client c{cfg};
  auto peer = c.connect(at, timeout);
  if (!peer) return peer.err();
  std::vector<node_list> out;
  uint64_t request = 0;
  for (auto& q : queries) {
    auto reply = c.ask<wire_msg::list_reply>(
        *peer, wire_msg::list_request{++request, q.what, q.limit}, timeout);
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

} // namespace

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
  auto state = cluster_status(cfg, timeout);
  if (!state) return state.err();
  if (!node.empty())
    if (auto n = node_of(cfg, *state, node); !n) return n.err();
  std::vector<listed> out;
  for (auto& n : state->nodes) {
    if (!n.alive || n.client || (!node.empty() && n.name != node)) continue;
    auto answer = list_at(cfg, reached_at(n), {{what, 0}}, timeout);
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
  auto at = address_of(cfg, node, timeout);
  if (!at) return at.err();
  return list_at(cfg, *at, queries, timeout);
}

result<std::vector<node_list>> list_node(const cluster_config& cfg, const node_status& node,
                                         const std::vector<list_query>& queries,
                                         std::chrono::milliseconds timeout) {
  return list_at(cfg, reached_at(node), queries, timeout);
}

result<client_options> client_options_from_env() {
  const char* address = std::getenv("SWARM_ADDRESS");
  const char* secret = std::getenv("SWARM_SECRET");
  if (!address || !*address)
    return error{errc::invalid_argument,
                 "SWARM_ADDRESS is not set: this program was not started by `swarm job "
                 "submit` (or give the head's host:port)"};
  if (!secret) return error{errc::invalid_argument, "SWARM_SECRET is not set"};
  auto o = head_address(address, "SWARM_ADDRESS");
  if (!o) return o.err();
  o->secret = secret;
  auto tls = tls_from_env();
  if (!tls) return tls.err();
  o->tls = *tls;
  return o;
}

result<client_options> head_address(const std::string& text, const std::string& what) {
  auto colon = text.rfind(':');
  unsigned long port = 0;
  try {
    if (colon != std::string::npos) port = std::stoul(text.substr(colon + 1));
  } catch (const std::exception&) {
    port = 0;
  }
  if (colon == std::string::npos || colon == 0 || port == 0 || port > 65535)
    return error{errc::invalid_argument, what + " must be host:port, got '" + text + "'"};
  client_options o;
  o.address = text.substr(0, colon);
  o.port = static_cast<uint16_t>(port);
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
  auto a = c.ask<wire_msg::job_answer>(*head, m, timeout);
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
  auto a = ask_jobs(cfg, wire_msg::job_submit{1, argv, cwd, cfg.jobs.token}, timeout);
  if (!a) return a.err();
  return state_of(a->jobs.at(0));
}

result<std::vector<job_state>> list_jobs(const cluster_config& cfg, uint64_t id,
                                         std::chrono::milliseconds timeout) {
  auto a = ask_jobs(
      cfg,
      wire_msg::job_ask{1, wire_msg::job_ask::kind_type::status, id, 0, cfg.jobs.token},
      timeout);
  if (!a) return a.err();
  std::vector<job_state> out;
  for (auto& r : a->jobs)
    out.push_back(state_of(r));
  return out;
}

result<job_output> job_output_from(const cluster_config& cfg, uint64_t id,
                                   uint64_t offset, std::chrono::milliseconds timeout) {
  auto a = ask_jobs(cfg,
                    wire_msg::job_ask{1, wire_msg::job_ask::kind_type::output, id, offset,
                                      cfg.jobs.token},
                    timeout);
  if (!a) return a.err();
  return job_output{state_of(a->jobs.at(0)),
                    std::string(a->output.begin(), a->output.end()), a->output_end};
}

result<job_state> stop_job(const cluster_config& cfg, uint64_t id,
                           std::chrono::milliseconds timeout) {
  auto a = ask_jobs(
      cfg,
      wire_msg::job_ask{1, wire_msg::job_ask::kind_type::stop, id, 0, cfg.jobs.token},
      timeout);
  if (!a) return a.err();
  return state_of(a->jobs.at(0));
}

result<void> stop_cluster(const cluster_config& cfg, const std::string& node,
                          std::chrono::milliseconds timeout) {
  cluster_client c{cfg};
  if (!node.empty()) {
    auto at = address_of(cfg, node, timeout);
    if (!at) return at.err();
    return c.send(*at, wire_msg::stop_request{node, {}}, timeout);
  }
  auto sent = c.send(cfg.head(), wire_msg::stop_request{node, {}}, timeout);
  if (sent) return sent;
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

result<std::string> wait_stopped(const cluster_config& cfg, const std::string& node,
                                 std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::optional<std::chrono::steady_clock::time_point> gone_since;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    auto state = cluster_status(cfg, std::max(left, std::chrono::milliseconds{500}));
    if (!state)
      return error{errc::node_unreachable,
                   "the head's table cannot be read: " + state.err().message};
    auto row = std::find_if(state->nodes.begin(), state->nodes.end(),
                            [&](const node_status& n) { return n.name == node; });
    if (row == state->nodes.end()) return std::string{};
    // Its report follows its leaving heartbeat, once it handed what it holds over: up
    // to 2 s more for it (a node that died sends none).
    if (!row->alive) {
      if (!row->stop_report.empty()) return row->stop_report;
      if (!gone_since) gone_since = std::chrono::steady_clock::now();
      if (std::chrono::steady_clock::now() - *gone_since > std::chrono::seconds{2} ||
          std::chrono::steady_clock::now() + std::chrono::milliseconds{100} > deadline)
        return std::string{};
      std::this_thread::sleep_for(std::chrono::milliseconds{100});
      continue;
    }
    if (std::chrono::steady_clock::now() + std::chrono::milliseconds{100} > deadline)
      return error{errc::timeout, "node '" + node + "' is still alive after " +
                                      std::to_string(timeout.count()) + " ms" +
                                      (row->stop_report.empty()
                                           ? std::string{}
                                           : " (it stops: " + row->stop_report + ")")};
    std::this_thread::sleep_for(std::chrono::milliseconds{100});
  }
}

} // namespace swarm
