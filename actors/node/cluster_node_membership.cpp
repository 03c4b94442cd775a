// A cluster node's side of membership: joining the head, the connections the membership
// actor asks for, and what a fenced or lost node does (the membership port).

#include "actors/node/cluster_node.hpp"

#include <caf/all.hpp>

#include "actors/common/protocol.hpp"
#include "actors/objects/object_manager.hpp"
#include "actors/scheduling/protocol.hpp"
#include "actors/user_actors/protocol.hpp"

namespace swarm::actors {

using namespace std::chrono_literals;

void cluster_node::join_head() {
  // The head may start after this node: retry for a while, then give up loudly.
  auto deadline = steady::now() + 30s;
  result<void> ok = error{errc::node_unreachable, "not tried"};
  // Tried again every 100 ms until the head listens; a stop ends the wait at once.
  for (auto wait = 0ms; steady::now() < deadline; wait = 100ms) {
    if (wait_for_stop(wait))
      throw failure{
          {errc::runtime_stopped,
           "node '" + link_.self.name + "' was stopped before it joined the head"}};
    ok = link_.connect_to(head_name());
    if (ok || ok.err().message.find("secret") != std::string::npos) break;
  }
  if (!ok)
    throw failure{{errc::node_unreachable, "node '" + link_.self.name +
                                               "' cannot join the head '" + head_name() +
                                               "': " + ok.err().message}};
  (void)net_->send(head_name(), join_message());
}

// -- what membership asks of this node
// ---------------------------------------------------

bool cluster_node::send(const std::string& peer, const wire_msg::message& m) {
  return static_cast<bool>(net_->send(peer, m));
}

bool cluster_node::connected(const std::string& peer) {
  return net_->connected(peer);
}

std::optional<std::chrono::milliseconds>
cluster_node::quiet_for(const std::string& peer) {
  return net_->quiet_for(peer);
}

void cluster_node::disconnect(const std::string& peer, const std::string& why) {
  net_->disconnect(peer, why);
}

void cluster_node::dial(const std::string& peer) {
  link_.post([this, peer] { (void)link_.connect_to(peer); });
}

void cluster_node::rejoin() {
  // Joining again may block (a connect): the agent does it, one attempt at a time.
  if (rejoining_.exchange(true)) return;
  link_.post([this] {
    if (link_.connect_to(head_name())) (void)net_->send(head_name(), join_message());
    rejoining_ = false;
  });
}

void cluster_node::fenced(uint64_t life, const std::string& why) {
  link_.life = life;
  ++fenced_;
  // The agent stops the stale actors (the directory's, asked and waited for), then joins
  // as the new life: no join of it goes out while they still serve.
  link_.post([this, why] {
    uint64_t stopped = 0;
    caf::scoped_actor self{link_.local->system()};
    self->request(link_.directory, std::chrono::seconds(10), fence_atom::value, why)
        .receive([&](uint64_t n) { stopped = n; },
                 [&](caf::error& e) {
                   log().warn("node '" + link_.self.name +
                              "' could not stop the actors it hosted for other nodes: " +
                              caf::to_string(e));
                 });
    // The tasks other nodes placed in that life go too: their owners ran them again.
    uint64_t cancelled = 0;
    uint64_t first = (link_.index + 1) << owner_index_shift;
    self->request(local_->scheduler(), std::chrono::seconds(10), cancel_atom::value,
                  others_atom::value, first,
                  first + ((uint64_t{1} << owner_index_shift) - 1))
        .receive([&](uint64_t n) { cancelled = n; },
                 [&](caf::error& e) {
                   log().warn("node '" + link_.self.name +
                              "' could not cancel the tasks it ran for other nodes: " +
                              caf::to_string(e));
                 });
    log().warn(
        "node '" + link_.self.name + "' stopped " + std::to_string(stopped) +
        " actor(s) it hosted for other nodes, restarted elsewhere, and cancelled " +
        std::to_string(cancelled) +
        " task(s) placed here for them, run again elsewhere; it joins again");
    // The old life's connections go too: a peer may have closed its end while the
    // network was cut, and not know this end is still open; this life's messages must
    // not go on it.
    // The table held while it is read: a publish meanwhile may drop the last other hold
    // (a temporary in the loop's head would go before the loop runs).
    auto table = link_.members.get();
    for (auto& [name, p] : *table)
      if (name != link_.self.name && name != head_name() && net_->connected(name))
        net_->disconnect(name, "node '" + link_.self.name + "' begins a new life");
    if (link_.connect_to(head_name())) (void)net_->send(head_name(), join_message());
  });
}

void cluster_node::set_kv_placement(const wire_msg::kv_placement& p) {
  local_->gcs().set_kv_placement(p);
}

uint64_t cluster_node::kv_placement_version() {
  return local_->gcs().kv_placement_version();
}

void cluster_node::set_chain(std::vector<std::string> members) {
  local_->gcs().set_chain(std::move(members));
}

void cluster_node::lost(const std::string& peer, const std::string& why) {
  // Pulls from there fail, results located there count as gone, results held here for
  // owners there go.
  caf::anon_send(link_.objects, lost_atom::value, peer, why);
  // Actors this node created there restart elsewhere, and calls to them wait for that;
  // then the rest fails over.
  caf::anon_send(link_.directory, lost_atom::value, peer, why);
  // What this node asked of it and waits for fails now.
  caf::anon_send(link_.control, lost_atom::value, peer);
}

} // namespace swarm::actors
