#include "actors/node/cluster_node.hpp"

#include "actors/control_store/protocol.hpp"
#include "actors/node/autoscaler.hpp"
#include "actors/node/job_runner.hpp"
#include "actors/node/protocol.hpp"
#include "actors/objects/object_routes.hpp"
#include "actors/ownership/owner_routes.hpp"
#include "actors/scheduling/global_scheduler.hpp"
#include "actors/scheduling/protocol.hpp"

#include <caf/all.hpp>

#include <random>

#include "framework/detail/wire_convert.hpp"

namespace swarm::actors {

// What reaches a cluster node from the others: the routes of wire messages, the answers
// to clients, stops, and placement groups asked of the head.

using namespace std::chrono_literals;
using detail::key_of;

result<detail::group_placement> cluster_node::ask_head(wire_msg::group_ask m,
                                                       std::chrono::milliseconds wait) {
  auto a = wait.count() > 0 ? link_.request(head_name(), std::move(m), wait)
                            : link_.request(head_name(), std::move(m));
  if (!a) return a.err();
  auto* g = std::get_if<wire_msg::group_answer>(&*a);
  if (!g) return error{errc::invalid_argument, "unexpected answer to a placement group"};
  if (!g->ok) return detail::from_wire(g->error);
  detail::group_placement out{g->nodes, {}};
  for (auto& b : g->bundles) {
    auto r = detail::from_list(b);
    if (!r) return r.err();
    out.bundles.push_back(*r);
  }
  return out;
}

result<void> cluster_node::create_group(uint64_t id, const placement_group_options& o) {
  if (is_head()) return create_group_at(link_.global, id, o);
  wire_msg::group_ask m;
  m.kind = wire_msg::group_ask::kind_type::create;
  m.id = id;
  for (auto& b : o.bundles)
    m.bundles.push_back(detail::to_list(b));
  m.strategy = static_cast<uint8_t>(o.strategy);
  auto a = ask_head(std::move(m));
  if (!a) return a.err();
  return {};
}

result<detail::group_placement>
cluster_node::wait_group(uint64_t id, std::chrono::milliseconds timeout) {
  if (is_head()) return wait_group_at(link_.global, id, timeout);
  wire_msg::group_ask m;
  m.id = id;
  m.kind = wire_msg::group_ask::kind_type::query;
  if (timeout.count() <= 0) return ask_head(std::move(m));
  // The head answers a wait once the group is placed: asked in rounds of at most 8 s (a
  // request's own limit is 10 s) until `timeout`.
  m.kind = wire_msg::group_ask::kind_type::wait;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return error{errc::timeout, "placement group " + std::to_string(id) +
                                      " not placed after " +
                                      std::to_string(timeout.count()) + " ms"};
    auto a = ask_head(m, std::min<std::chrono::milliseconds>(left, 8s));
    if (a || a.err().code != errc::timeout) return a;
  }
}

result<void> cluster_node::remove_group(uint64_t id) {
  if (is_head()) return remove_group_at(link_.global, id);
  wire_msg::group_ask m;
  m.kind = wire_msg::group_ask::kind_type::remove;
  m.id = id;
  auto a = ask_head(std::move(m));
  if (!a) return a.err();
  return {};
}

void cluster_node::on_group_ask(const std::string& peer, const wire_msg::group_ask& m) {
  auto reply = [this, peer, rid = m.request_id](result<detail::group_placement> a) {
    wire_msg::group_answer out;
    out.request_id = rid;
    out.ok = a.has_value();
    if (a) {
      out.nodes = a->nodes;
      for (auto& b : a->bundles)
        out.bundles.push_back(detail::to_list(b));
    } else {
      out.error = detail::to_wire(a.err());
    }
    link_.send_while_open(peer, std::move(out));
  };
  group_request r;
  r.id = m.id;
  r.then = reply;
  using kind = wire_msg::group_ask::kind_type;
  if (m.kind == kind::create) {
    r.what = group_request::kind::create;
    if (m.strategy > static_cast<uint8_t>(placement_strategy::strict_spread))
      return reply(error{errc::invalid_argument,
                         "unknown placement strategy " + std::to_string(m.strategy)});
    r.options.strategy = static_cast<placement_strategy>(m.strategy);
    for (auto& b : m.bundles) {
      auto rs = detail::from_list(b);
      if (!rs) return reply(rs.err());
      r.options.bundles.push_back(*rs);
    }
  } else {
    r.what = m.kind == kind::query  ? group_request::kind::query
             : m.kind == kind::wait ? group_request::kind::wait
                                    : group_request::kind::remove;
  }
  caf::anon_send(link_.global, group_atom::value, std::move(r));
}

// -- dispatch
// ------------------------------------------------------------------------------

void cluster_node::output(const detail::task_spec* task, std::string_view text) {
  // Printed here when the caller is here, or its node is gone.
  if (!task || task->origin.empty() || task->origin == link_.self.name ||
      !link_.reachable(task->origin))
    return core::output(task, text);
  log().debug("output of '" + detail::output_label(*task) + "' for node '" +
              task->origin + "': " + std::string{text});
  link_.send_while_open(task->origin,
                        wire_msg::task_output{detail::output_label(*task),
                                              link_.self.name, std::string{text}});
}

bool cluster_node::cancel(detail::task_spec& task) {
  if (!local_->cancel(task)) return false;
  // Sent to other nodes: those running it are told (nothing when it was not).
  link_.owner.cancel(key_of(task.result->id()));
  return true;
}

void cluster_node::add_routes() {
  using namespace wire_msg;
  add_object_routes(routes_, link_.objects);
  add_owner_routes(routes_, link_.owner, link_.streams);
  add_answer_routes(routes_, link_.control);
  add_directory_routes(routes_, link_.directory);
  // Work sent here: queued at once, for the scheduler or the actor's mailbox.
  routes_.in_place<task_submit>(
      [this](const std::string&, task_submit&& m) { tasks_->on_submit(std::move(m)); });
  routes_.in_place<actor_call>([this](const std::string&, actor_call&& m) {
    actors_->on_actor_call(std::move(m));
  });
  // To the scheduler of the moment: it is started again when it fails.
  routes_.in_place<task_cancel>([this](const std::string&, task_cancel&& m) {
    caf::anon_send(local_->scheduler(), cancel_atom::value, m.result.owner, m.result.seq);
  });
  // Membership: a node joins as itself only, and only the head's table is the truth.
  routes_.mailbox<heartbeat>(
      link_.membership, [](const std::string& peer, heartbeat&& m) {
        return std::make_tuple(heartbeat_atom::value, peer, std::move(m));
      });
  routes_.mailbox<node_stopped>(
      link_.membership, [](const std::string& peer, node_stopped&& m) {
        return std::make_tuple(stopped_atom::value, peer, std::move(m.report));
      });
  routes_.in_place<join>([this](const std::string& peer, join&& m) {
    if (m.node.name == peer)
      caf::anon_send(link_.membership, join_atom::value, std::move(m));
    else
      log().warn("node '" + peer + "' asked to join as '" + m.node.name + "': ignored");
  });
  routes_.in_place<node_table>([this](const std::string& peer, node_table&& m) {
    if (peer == head_name())
      caf::anon_send(link_.membership, table_atom::value, std::move(m));
  });
  routes_.in_place<node_fenced>([this](const std::string& peer, node_fenced&& m) {
    if (peer == head_name())
      caf::anon_send(link_.membership, fenced_atom::value, std::move(m));
  });
  // The control store's rows and chains.
  routes_.in_place<job_info>(
      [this](const std::string&, job_info&& m) { store_->on_row(m); });
  routes_.in_place<object_location>(
      [this](const std::string&, object_location&& m) { store_->on_row(m); });
  routes_.in_place<kv_request>([this](const std::string& peer, kv_request&& m) {
    store_->on_kv_request(peer, std::move(m));
  });
  routes_.in_place<kv_placement>([this](const std::string& peer, kv_placement&& m) {
    if (peer == link_.head_name())
      local_->gcs().set_kv_placement(m);
    else
      log().warn("a key-value placement from node '" + peer +
                 "' ignored: only the head places shards");
  });
  routes_.in_place<gcs_chain>([this](const std::string& peer, gcs_chain&& m) {
    auto shard = m.shard;
    if (!local_->gcs().chain_message(std::move(m)))
      log().warn("chain message from '" + peer + "' for shard " + std::to_string(shard) +
                 " dropped: this node has " + std::to_string(link_.cfg.gcs_shards));
  });
  // Actors created, named and looked up here: these ask other actors and wait.
  routes_.posted<actor_create>(
      [this](const std::string&, actor_create&& m) { actors_->create_actor_here(m); });
  routes_.posted<actor_register>([this](const std::string& peer, actor_register&& m) {
    actors_->register_remote_name(peer, m);
  });
  routes_.posted<actor_lookup>([this](const std::string& peer, actor_lookup&& m) {
    actors_->lookup_name(peer, m);
  });
  // What users and tools ask of a node.
  routes_.posted<list_request>([this](const std::string& peer, list_request&& m) {
    list_reply out{m.request_id, link_.self.name, {}, 0};
    if (auto rows = local_->list(m.what)) {
      out.rows = std::move(*rows);
      if (m.what == "timeline") add_transfers(out.rows);
    } else {
      out.rows.push_back({"", "", "error", rows.err().message, {}});
    }
    out.total = out.rows.size();
    if (m.limit > 0 && out.rows.size() > m.limit) out.rows.resize(m.limit);
    link_.send_while_open(peer, std::move(out));
  });
  routes_.in_place<task_output>([](const std::string&, task_output&& m) {
    detail::print_output(m.function, m.node, m.text);
  });
  routes_.in_place<stop_request>(
      [this](const std::string&, stop_request&& m) { on_stop(m); });
  if (!is_head()) {
    routes_.in_place<status_request>([this](const std::string& peer, status_request&&) {
      link_.send_to(peer, table_snapshot());
    });
    // Jobs run on the head only: asked here, the answer says so.
    auto not_here = [this](const std::string& peer, auto&& m) {
      job_answer no;
      no.request_id = m.request_id;
      no.error = "node '" + link_.self.name + "' is not the head: jobs run there";
      link_.send_to(peer, std::move(no));
    };
    routes_.in_place<job_submit>(not_here);
    routes_.in_place<job_ask>(not_here);
    routes_.in_place<client_ask>([this](const std::string& peer, client_ask&& m) {
      client_welcome no;
      no.request_id = m.request_id;
      auto& head = link_.cfg.head();
      no.error = "node '" + link_.self.name +
                 "' is not the head: join by the head's address (" + head.address + ":" +
                 std::to_string(head.port) + ")";
      link_.send_to(peer, std::move(no));
    });
    return;
  }
  // The head's own: the stored table, jobs, clients and placement groups.
  routes_.posted<status_request>([this](const std::string& peer, status_request&&) {
    auto t = store_->stored_table();
    auto out = t ? std::move(*t) : table_snapshot();
    out.launches = autoscaled();
    out.kv_shards = local_->gcs().kv_placement().chains;
    link_.send_to(peer, std::move(out));
  });
  auto to_jobs = [](const std::string& peer, auto&& m) {
    return std::make_tuple(job_atom::value, peer, std::move(m));
  };
  routes_.mailbox<job_submit>(jobs_, to_jobs);
  routes_.mailbox<job_ask>(jobs_, to_jobs);
  // Posted: the welcome reads the control store's node rows.
  routes_.posted<client_ask>([this](const std::string& peer, client_ask&& m) {
    link_.send_to(peer, welcome_client(m));
  });
  routes_.in_place<group_ask>(
      [this](const std::string& peer, group_ask&& m) { on_group_ask(peer, m); });
}

void cluster_node::on_message(const std::string& peer, wire_msg::message&& m) {
  auto kind = m.index();
  if (!routes_.deliver(peer, std::move(m)))
    log().warn(std::string{"a '"} + wire_msg::message_names[kind] + "' message from '" +
               peer + "' has no route on this node: dropped");
}

wire_msg::client_welcome cluster_node::welcome_client(const wire_msg::client_ask& ask) {
  auto& cfg = link_.cfg;
  wire_msg::client_welcome w;
  w.request_id = ask.request_id;
  w.cluster = cfg.name;
  auto members = link_.members.get();
  if (auto p = members->find(ask.name); p != members->end() && p->second.info.alive) {
    auto& live = p->second.info;
    w.error = "node '" + ask.name + "' is alive in cluster '" + cfg.name + "' (" +
              (live.client ? std::string{"a client"}
                           : "at " + live.address + ":" + std::to_string(live.port)) +
              "): a second " + (ask.worker ? "node" : "client") + " under its name is refused";
    log().warn(w.error);
    return w;
  }
  w.ok = true;
  for (auto& n : cfg.nodes) {
    wire_msg::node_info i;
    i.name = n.name;
    i.address = n.address;
    i.port = n.port;
    i.head = n.role == node_spec::role_type::head;
    w.nodes.push_back(std::move(i));
  }
  // An owner index no node of the file has, nor any other that joined (now or before a
  // restart of this head, as its stored rows say): drawn at random past the file's.
  std::set<uint32_t> taken;
  for (auto& [name, p] : *members)
    taken.insert(p.info.owner_index);
  if (auto stored = store_->control_table("node"))
    for (auto& row : *stored)
      taken.insert(std::get<wire_msg::node_info>(row).owner_index);
  std::random_device seed;
  std::mt19937 gen{seed()};
  auto first = static_cast<uint32_t>(cfg.nodes.size()) + 1;
  std::uniform_int_distribution<uint32_t> pick{first,
                                               (1u << (63 - owner_index_shift)) - 1};
  do
    w.owner_index = pick(gen);
  while (taken.count(w.owner_index));
  w.heartbeat_ms = static_cast<uint64_t>(cfg.heartbeat_interval.count());
  w.node_timeout_ms = static_cast<uint64_t>(cfg.node_timeout.count());
  w.idle_connection_ms = static_cast<uint64_t>(cfg.idle_connection.count());
  w.join_wait_ms = static_cast<uint64_t>(cfg.join_wait.count());
  w.gcs_shards = static_cast<uint32_t>(cfg.gcs_shards);
  w.gcs_replication = static_cast<uint32_t>(cfg.gcs_replication);
  w.inline_threshold = cfg.inline_threshold;
  w.max_message_bytes = cfg.max_message_bytes;
  return w;
}

std::vector<wire_msg::node_launch> cluster_node::autoscaled() {
  std::vector<wire_msg::node_launch> out;
  if (!autoscaler_) return out;
  caf::scoped_actor asker{local_->system()};
  asker->request(autoscaler_, std::chrono::seconds(1), launches_atom::value)
      .receive([&](std::vector<wire_msg::node_launch>& l) { out = std::move(l); },
               [](caf::error&) {});
  return out;
}

wire_msg::node_table cluster_node::table_snapshot() const {
  return to_node_table(*link_.members.get(), caf::actor_clock::clock_type::now());
}

void cluster_node::on_stop(const wire_msg::stop_request& m) {
  // The cluster, or the head, stops: the autoscaler starts no node in place of those
  // that go.
  if (autoscaler_ && (m.node.empty() || m.node == link_.self.name))
    caf::anon_send_exit(autoscaler_, caf::exit_reason::user_shutdown);
  if (is_head() && (m.node.empty() || m.node != link_.self.name)) {
    std::vector<std::string> targets;
    auto peers = link_.members.get();
    for (auto& [name, p] : *peers)
      if (name != link_.self.name && p.info.alive && (m.node.empty() || name == m.node))
        targets.push_back(name);
    for (auto& n : targets)
      link_.send_to(n, wire_msg::stop_request{n, {}});
    if (!m.node.empty()) return;
  }
  std::lock_guard<std::mutex> guard{stop_mtx_};
  stop_requested_ = true;
  stop_reason_ = m.reason;
  stop_cv_.notify_all();
}

std::string cluster_node::stop_reason() const {
  std::lock_guard<std::mutex> guard{stop_mtx_};
  return stop_reason_;
}

} // namespace swarm::actors
