#include <unistd.h>

#include <algorithm>
#include <condition_variable>
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
  explicit cluster_client(const cluster_config& cfg) {
    wire_msg::endpoint_config ec;
    ec.name = "swarm-client-" + std::to_string(::getpid());
    ec.secret = cfg.secret;
    ec.listen = false;
    // Status and stop requests move no objects.
    ec.bulk_connection = false;
    ec.max_frame_bytes = cfg.max_message_bytes;
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
  return static_cast<size_t>(
      std::count_if(nodes.begin(), nodes.end(), [](auto& n) { return n.alive; }));
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
