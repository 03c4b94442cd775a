#include "actors/node/cluster_store.hpp"
#include "actors/common/wall_clock.hpp"
#include "actors/control_store/protocol.hpp"
#include "actors/scheduling/protocol.hpp"

#include <caf/all.hpp>

#include <algorithm>

#include "framework/detail/wire_convert.hpp"

namespace swarm::actors {

namespace {

using detail::from_list;

std::string object_row_key(const wire_msg::object_ref_id& id) {
  return std::to_string(id.owner) + "." + std::to_string(id.seq);
}

} // namespace

// -- control store: node, job and object tables
// ------------------------------------------

void cluster_store::record_node(wire_msg::node_info info) {
  // A client runs no work: the global scheduler never places any there.
  if (link_.global && !info.client)
    if (auto total = from_list(info.total))
      caf::anon_send(link_.global, update_atom::value, info.name,
                     node_report{*total, info.queued, info.by_priority, info.alive,
                                 abilities_of(info)});
  info.last_seen_ms = wall_ms(); // stored as a time; reported as an age
  info.head = info.name == link_.head_name();
  auto name = info.name;
  link_.local->gcs().put("node", name, std::move(info));
}

void cluster_store::forget_node(const std::string& node) {
  link_.local->gcs().erase("node", node);
  // Its jobs ended with it: a client killed by a signal never said so.
  auto jobs = link_.local->gcs().scan("job");
  if (!jobs) return;
  for (auto& row : *jobs) {
    auto j = std::get<wire_msg::job_info>(row);
    if (j.driver != node || !j.running) continue;
    j.running = false;
    j.ended_ms = wall_ms();
    link_.local->gcs().put("job", std::to_string(j.id), std::move(j));
  }
}

void cluster_store::forget_restored_liveness() {
  // Rows restored from a persisted control store (`gcs_dir`) describe nodes this head
  // has not heard from since it started: none is alive until it joins again (workers
  // rejoin by themselves). A join racing this write is re-recorded at its next heartbeat.
  auto rows = link_.local->gcs().scan("node");
  if (!rows) return;
  for (auto& row : *rows) {
    auto n = std::get<wire_msg::node_info>(row);
    if (n.name == link_.self.name || !n.alive) continue;
    n.alive = false;
    // The key copied first: the row, moved into its argument, may be made before it.
    auto key = n.name;
    link_.local->gcs().put("node", key, std::move(n));
  }
}

void cluster_store::publish(wire_msg::message row) {
  if (link_.is_head())
    std::visit(
        [this](auto& r) {
          using T = std::decay_t<decltype(r)>;
          if constexpr (std::is_same_v<T, wire_msg::job_info> ||
                        std::is_same_v<T, wire_msg::object_location>)
            on_row(r);
        },
        row);
  else
    link_.send_to(link_.head_name(), std::move(row));
}

void cluster_store::on_row(const wire_msg::job_info& j) {
  if (link_.is_head()) link_.local->gcs().put("job", std::to_string(j.id), j);
}

void cluster_store::on_row(const wire_msg::object_location& o) {
  if (!link_.is_head()) return;
  if (o.present)
    link_.local->gcs().put("object", object_row_key(o.id), o);
  else
    link_.local->gcs().erase("object", object_row_key(o.id));
}

void cluster_store::job_event(uint64_t id, bool running) {
  caf::anon_send(link_.control, job_atom::value, id, running);
}

result<std::vector<table_row>> cluster_store::control_table(const std::string& table) {
  if (!link_.is_head())
    return error{errc::invalid_argument,
                 "node '" + link_.self.name + "' holds no control store: ask the head"};
  return link_.local->gcs().scan(table);
}

result<wire_msg::node_table> cluster_store::stored_table() {
  auto nodes = link_.local->gcs().scan("node");
  if (!nodes) return nodes.err();
  auto jobs = link_.local->gcs().scan("job");
  if (!jobs) return jobs.err();
  wire_msg::node_table t;
  auto now = wall_ms();
  // A row is written when the node's state changes; when it was last heard from is the
  // membership's (published each tick), for the nodes it knows.
  auto live = link_.members.get();
  auto steady_now = caf::actor_clock::clock_type::now();
  for (auto& row : *nodes) {
    auto n = std::get<wire_msg::node_info>(row);
    if (auto p = live->find(n.name); p != live->end() && n.alive)
      n.last_seen_ms =
          static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                    steady_now - p->second.last_seen)
                                    .count());
    else
      n.last_seen_ms = now > n.last_seen_ms ? now - n.last_seen_ms : 0;
    t.nodes.push_back(std::move(n));
  }
  for (auto& row : *jobs)
    t.jobs.push_back(std::get<wire_msg::job_info>(row));
  std::sort(t.nodes.begin(), t.nodes.end(), [](auto& a, auto& b) {
    return std::make_pair(!a.head, a.name) < std::make_pair(!b.head, b.name);
  });
  std::sort(t.jobs.begin(), t.jobs.end(), [](auto& a, auto& b) { return a.id < b.id; });
  return t;
}

// -- the key-value table
// -------------------------------------------

result<std::optional<std::vector<uint8_t>>>
cluster_store::kv(detail::kv_op op, const std::string& name, std::vector<uint8_t> value) {
  if (value.size() > link_.cfg.max_message_bytes)
    return error{errc::invalid_argument,
                 "a key-value value of " + std::to_string(value.size()) +
                     " bytes is over the cluster's max_message_bytes (" +
                     std::to_string(link_.cfg.max_message_bytes) + ")"};
  auto& gcs = link_.local->gcs();
  // A spread table's shard that moved (its node lost, or back to its host) is asked
  // again at the node the head's next placement names, until the deadline.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (int tries = 1;; ++tries) {
    auto version = gcs.kv_placement_version();
    auto node = gcs.kv_node(name);
    auto r =
        node ? kv_at(*node, op, name, value) : kv_at(link_.head_name(), op, name, value);
    if (r || r.err().code == errc::invalid_argument) return r;
    // Without a placement: the head serves the table, unless it spread it (then it
    // answered that another node serves the key, or that it has not placed the table
    // yet: a head started again places it once its nodes are back).
    if (!node && r.err().code != errc::runtime_stopped) return r;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left <= std::chrono::milliseconds::zero())
      return error{r.err().code, r.err().message + " (asked " + std::to_string(tries) +
                                     " times in 10 s, the last at node '" +
                                     node.value_or(link_.head_name()) +
                                     "' by the placement of version " +
                                     std::to_string(version) + ")"};
    bool placed =
        gcs.await_kv_placement(version, std::min(left, std::chrono::milliseconds(250)));
    if (!node && !placed && !gcs.spread()) return r; // one host: no placement comes
  }
}

result<std::optional<std::vector<uint8_t>>>
cluster_store::kv_at(const std::string& node, detail::kv_op op, const std::string& name,
                     std::vector<uint8_t> value) {
  if (node.empty())
    return error{errc::runtime_stopped,
                 "no node serves key '" + name + "' of the key-value table yet"};
  if (node == link_.self.name) return link_.local->kv(op, name, std::move(value));
  wire_msg::kv_request m;
  m.op = static_cast<wire_msg::kv_request::op_type>(op);
  m.key = name;
  m.value = std::move(value);
  auto a = link_.request(node, std::move(m));
  if (!a) return a.err();
  auto* r = std::get_if<wire_msg::kv_reply>(&*a);
  if (!r)
    return error{errc::invalid_argument, "node '" + node +
                                             "' answered a key-value request with "
                                             "another kind of message"};
  return from_wire(std::move(*r));
}

void cluster_store::on_kv_request(const std::string& peer, wire_msg::kv_request m) {
  auto id = m.request_id;
  auto answer = [this, peer, id](result<std::optional<std::vector<uint8_t>>> r) {
    link_.send_while_open(peer, to_wire(id, std::move(r)));
  };
  // Without a placement only the head serves the table (the others' shards are copies).
  if (!link_.is_head() && !link_.local->gcs().kv_node(m.key))
    return answer(error{errc::runtime_stopped,
                        "node '" + link_.self.name +
                            "' serves no key-value shard: the head serves them all"});
  link_.local->gcs().kv_async(static_cast<detail::kv_op>(m.op), m.key, std::move(m.value),
                              answer);
}

} // namespace swarm::actors
