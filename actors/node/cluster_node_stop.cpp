#include "actors/node/cluster_node.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "actors/user_actors/actor_host.hpp"
#include "actors/user_actors/protocol.hpp"

// How a cluster node stops: it tells the head, its hosted actors send their owners their
// state, its results go over to their owners, then its parts stop in order.

namespace swarm::actors {

void cluster_node::tell_owners_actors_move() {
  // Each owner learns which of its actors hosted here move: their restarts elsewhere,
  // once this node's connection closes, use none of their `max_restarts`.
  std::map<std::string, std::vector<uint64_t>> by_owner;
  for (auto& rec : link_.hosted.all())
    if (auto id = link_.hosted.id_of(rec.get()); id && !rec->spec().owner_node.empty())
      by_owner[rec->spec().owner_node].push_back(*id);
  for (auto& [owner, ids] : by_owner)
    if (!link_.gone(owner)) link_.send_to(owner, wire_msg::actors_moving{std::move(ids)});
}

size_t cluster_node::save_hosted_states() {
  // Each checkpointing actor hosted here sends its owner the state of its calls since
  // its last checkpoint: its restart elsewhere loses none. They go ahead of the stop's
  // other messages to the owner, on the same connection.
  auto bound = std::min<std::chrono::milliseconds>(link_.cfg.stop_timeout / 4,
                                                   std::chrono::seconds(5));
  auto deadline = std::chrono::steady_clock::now() + bound;
  caf::scoped_actor self{local_->system()};
  size_t saved = 0;
  for (auto& rec : link_.hosted.all()) {
    auto* host = dynamic_cast<host_record*>(rec.get());
    auto a = host ? host->host() : caf::actor{};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (!a || left.count() <= 0) continue;
    self->request(a, left, checkpoint_atom::value)
        .receive([&](bool s) { saved += s; },
                 [&](caf::error& e) {
                   log().warn("actor of type '" + rec->spec().type_name +
                              "' did not save its state as node '" + link_.self.name +
                              "' stops: " + local_->system().render(e));
                 });
  }
  return saved;
}

void cluster_node::stop_actors() {
  // The global scheduler's handle stays (the network's handlers may still read it; what
  // they send is dropped); the agent's goes, or its detached thread would outlive the
  // system.
  auto stop = [this](const auto& a) {
    if (!a) return;
    caf::scoped_actor self{local_->system()};
    self->send_exit(a, caf::exit_reason::user_shutdown);
    self->wait_for(a);
  };
  stop(autoscaler_);
  stop(link_.membership);
  stop(link_.control);
  stop(link_.objects);
  stop(link_.directory);
  stop(link_.owner.handle());
  stop(link_.streams);
  stop(jobs_);
  stop(link_.agent);
  stop(link_.global);
  link_.agent = nullptr;
}

std::string cluster_node::hand_over_results() {
  if (!link_.objects) return "held no results";
  // Only owners still pulling a result from here keep the node: a fraction of its stop.
  auto bound = link_.cfg.stop_timeout / 4;
  auto t0 = std::chrono::steady_clock::now();
  caf::scoped_actor self{local_->system()};
  std::string what;
  self->request(link_.objects, bound, hand_over_atom::value)
      .receive(
          [&](uint64_t handed) {
            auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - t0)
                          .count();
            what = "handed " + std::to_string(handed) +
                   " result(s) over to their owners' copies in " + std::to_string(ms) +
                   " ms";
            if (handed > 0) log().info(what);
          },
          [&](caf::error& e) {
            what = "not every owner of the results it held took them within " +
                   std::to_string(bound.count()) + " ms (" + local_->system().render(e) +
                   "): the tasks of those still pulling them run again";
            log().warn(what);
          });
  return what;
}

void cluster_node::drop_handles() {
  autoscaler_ = nullptr;
  link_.membership = nullptr;
  link_.control = nullptr;
  link_.objects = nullptr;
  link_.directory = nullptr;
  link_.owner = owner_ref{};
  link_.streams = nullptr;
  link_.global = nullptr;
}

cluster_node::~cluster_node() {
  auto step = [this](const char* what) {
    if (stop_step_) stop_step_->store(what);
  };
  step("closing the dashboard and the metrics");
  dashboard_.reset();
  metrics_.reset();
  {
    std::lock_guard<std::mutex> guard{link_.releases->mtx};
    link_.releases->net = nullptr;
    link_.releases->here = nullptr;
    link_.releases->forget = nullptr;
    link_.releases->freed = nullptr;
    link_.releases->unborrow = nullptr;
  }
  // The head places no more work here; what is queued goes back to its owners below.
  if (!is_head() && !link_.self.client && net_) {
    wire_msg::heartbeat leaving;
    leaving.leaving = true;
    (void)net_->send(head_name(), leaving);
    step("saving the state of the actors it hosts for other nodes");
    tell_owners_actors_move();
    auto saved = save_hosted_states();
    step("handing the results it holds over to their owners");
    auto handed = hand_over_results();
    // What it does, for `swarm stop` and `swarm status` (the head keeps it in its row).
    (void)net_->send(head_name(),
                     wire_msg::node_stopped{
                         "gives back " + std::to_string(tasks_->queued()) +
                         " task(s) queued or running here to their owners, to run "
                         "elsewhere; stops " +
                         std::to_string(link_.hosted.size()) +
                         " actor(s) it hosts for other nodes (" + std::to_string(saved) +
                         " sent their owners their state first); " + handed});
  }
  // Membership, the agent and the global scheduler call into this node: they go first.
  step("stopping membership, the agent and the global scheduler");
  stop_actors();
  {
    std::unique_lock<std::shared_mutex> alive{link_.alive_mtx};
    link_.closing = true;
  }
  drop_handles();
  // Work that came from other nodes and still runs here: its owners learn it failed.
  link_.hosted.clear();
  // Tasks finishing while the node stops still report through this node: it stays whole
  // until they are done.
  step("stopping the node's actors and the tasks still running");
  local_->stop();
  local_.reset();
  step("closing the connections to other nodes");
  link_.local = nullptr;
  net_.reset();
  link_.net = nullptr;
  step("stopping the node processes it started");
}

} // namespace swarm::actors
