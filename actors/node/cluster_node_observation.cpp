// What a cluster node reports: its metrics, its stats, and the transfers under way.

#include "actors/node/cluster_node.hpp"

#include <caf/all.hpp>

#include <map>

#include "actors/objects/protocol.hpp"
#include "actors/ownership/protocol.hpp"

namespace swarm::actors {

void cluster_node::collect(metric_set& out) {
  local_->collect(out);
  auto t = net_->traffic();
  static constexpr const char* lanes[] = {"control", "call", "bulk"}; // wire_msg::lane
  for (size_t lane = 0; lane < t.frames_sent.size(); ++lane) {
    metric_set::labels l{{"lane", lanes[lane]}};
    out.counter("swarm_frames_sent_total", "Frames sent to other nodes, by lane",
                static_cast<double>(t.frames_sent[lane]), l);
    out.counter("swarm_bytes_sent_total", "Bytes sent to other nodes, by lane",
                static_cast<double>(t.bytes_sent[lane]), l);
    out.counter("swarm_frames_received_total",
                "Frames received from other nodes, by lane",
                static_cast<double>(t.frames_received[lane]), l);
  }
  out.counter("swarm_connections_refused_total",
              "Connections refused (no proof of the secret, too many handshaking)",
              static_cast<double>(t.refused));
  out.gauge("swarm_connections", "Sockets open to other nodes (control and bulk)",
            static_cast<double>(t.connections));
  out.gauge("swarm_peers_connected", "Nodes this node has a connection up with",
            static_cast<double>(t.peers));
  out.counter("swarm_dials_total",
              "Nodes dialled because something was sent to them (connections on demand)",
              static_cast<double>(t.dials));
  out.counter("swarm_connections_idle_closed_total",
              "Connections closed as idle, by either side (the next message dials again)",
              static_cast<double>(t.idle_closed));
  out.gauge("swarm_read_buffer_bytes",
            "Bytes this node's connections hold to receive into (a connection quiet "
            "for a second gives back what a flood or a large frame grew)",
            static_cast<double>(t.read_buffer_bytes));
  out.counter("swarm_messages_undelivered_total",
              "Messages whose node could not be dialled (failed back to their owners)",
              static_cast<double>(t.undelivered));
  out.counter("swarm_node_fenced_total",
              "Times the head found this node dead while it ran (a freeze, a partition): "
              "it stopped the actors it hosted for others and joined as a new life",
              static_cast<double>(fenced_.load()));
  size_t alive = 0, known = 0;
  auto table = link_.members.get(); // held: a publish may drop the last other hold
  for (auto& [name, p] : *table) {
    ++known;
    alive += p.info.alive || name == link_.self.name ? 1 : 0;
  }
  out.gauge("swarm_nodes_alive", "Nodes alive in this node's view of the cluster",
            static_cast<double>(alive));
  out.gauge("swarm_nodes_dead", "Nodes that joined and are now dead, in this node's view",
            static_cast<double>(known - alive));
  std::map<std::pair<std::string, std::string>, double> scaled; // type, state
  for (auto& l : autoscaled())
    ++scaled[{l.type, l.state}];
  for (auto& [key, count] : scaled)
    out.gauge("swarm_autoscaler_nodes",
              "The head's autoscaler: its nodes by type and state (starting, up, "
              "stopping); 1 in state failed for a type whose last launch failed",
              count, {{"type", key.first}, {"state", key.second}});
}

node_stats cluster_node::stats() {
  auto s = local_->stats();
  caf::scoped_actor self{local_->system()};
  self->request(link_.objects, std::chrono::seconds(5), count_atom::value)
      .receive([&](uint64_t n) { s.pulled_entries = n; }, [](caf::error&) {});
  self->request(link_.owner.handle(), std::chrono::seconds(5), borrows_atom::value)
      .receive(
          [&](uint64_t lent, uint64_t borrowed) {
            s.lent_objects = lent;
            s.borrowed_objects = borrowed;
          },
          [](caf::error&) {});
  return s;
}

void cluster_node::add_transfers(std::vector<wire_msg::list_row>& rows) {
  caf::scoped_actor self{local_->system()};
  self->request(link_.objects, std::chrono::seconds(5), transfers_atom::value)
      .receive(
          [&](std::vector<transfer_event>& pulls) {
            for (auto& t : pulls)
              rows.push_back({object_id{t.key.first, t.key.second}.to_string(),
                              "pull",
                              t.failed ? "failed" : "finished",
                              "pulls from " + t.from,
                              {timeline_kind::transfer, 0, t.started_us, t.ended_us,
                               static_cast<int64_t>(t.bytes)}});
          },
          [](caf::error&) {});
}

} // namespace swarm::actors
