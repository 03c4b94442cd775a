#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "actors/node/node_link.hpp"

namespace swarm::actors {

class host_record;
class remote_actor_record;

/// A cluster node's actors: creation on a chosen node or where resources fit,
/// cluster-wide names in the head's control store, and calls straight from the caller to
/// the actor's node. Actors this node created on other nodes are restarted elsewhere when
/// their node is lost (the actor directory decides; this does the restart), and calls
/// made meanwhile wait for it.
class cluster_actors {
public:
  explicit cluster_actors(node_link& link);

  result<detail::actor_record_ptr> spawn(detail::actor_spec spec);
  void call(detail::actor_record& target, detail::task_ptr call);
  void kill(detail::actor_record& target, bool restart);
  result<detail::actor_record_ptr> find_actor(const std::string& name);
  /// See `core::address_of` and `core::actor_at`.
  detail::actor_address address_of(const detail::actor_record_ptr& target);
  result<detail::actor_record_ptr> actor_at(const detail::actor_address& addr);
  /// Creates an actor lost with its node again, on a node the global scheduler picks;
  /// one this node found by name is followed to where its owner restarts it.
  void restart_actor(const std::shared_ptr<remote_actor_record>& rec);

  // -- what other nodes ask of this one
  /// Creates the actor here and answers its owner; on the head, one not yet placed is
  /// placed by the global scheduler first. May block: run it on the agent.
  void create_actor_here(wire_msg::actor_create m);
  void on_actor_call(wire_msg::actor_call&& m);
  void register_remote_name(const std::string& peer, const wire_msg::actor_register& m);
  void lookup_name(const std::string& peer, const wire_msg::actor_lookup& m);

private:
  // One try of placing a restarting actor: its number, why the one before failed, and
  // until when it is tried again.
  struct restart_try {
    int attempt = 1;
    std::string before;
    std::chrono::steady_clock::time_point until;
  };
  // Places a restarting actor's `m`, again on a timer while no node that fits it is
  // alive or the chosen one turns out unreachable.
  void place_again(const std::shared_ptr<remote_actor_record>& rec,
                   wire_msg::actor_create m, restart_try t);
  // Creates a restarting actor pinned to its node there once the node is back (a new
  // life), tried on a timer until `until`; then it dies saying so.
  void restart_pinned(const std::shared_ptr<remote_actor_record>& rec,
                      wire_msg::actor_create m,
                      std::chrono::steady_clock::time_point until);
  // Where a created actor lives, and its id.
  using created = result<std::pair<std::string, uint64_t>>;
  using created_fn = std::function<void(const created&)>;
  // Creates `m` on `target` (this node, or asked of it and waited for).
  created create_on(const std::string& target, const wire_msg::actor_create& m);
  // The same, not waited for: `then` runs on the agent once `target` answered (or not).
  void create_on_then(const std::string& target, const wire_msg::actor_create& m,
                      created_fn then);
  // The outcome `at` of try `t` of `place_again` on `target`.
  void placed_again(const std::shared_ptr<remote_actor_record>& rec,
                    const wire_msg::actor_create& m, restart_try t,
                    const std::string& target, const created& at);
  // The outcome `at` of one try of `restart_pinned`.
  void pinned_tried(const std::shared_ptr<remote_actor_record>& rec,
                    const wire_msg::actor_create& m,
                    std::chrono::steady_clock::time_point until, const created& at);
  // Points `rec` at actor `id` on `node` and sends it the calls that waited.
  void resend_at(remote_actor_record& rec, const std::string& node, uint64_t id);
  // A restart succeeded: the actor lives `at`; its name follows, and the calls that
  // waited go there.
  void restarted(const std::shared_ptr<remote_actor_record>& rec,
                 const std::pair<std::string, uint64_t>& at);
  // How often a handle found by name looks its lost actor up again, and for how long.
  static constexpr std::chrono::milliseconds follow_every{200};
  std::chrono::milliseconds follow_timeout() const;
  // Where the actor named `name` lives, as the head's names say: asked of the head, or,
  // on the head, read from its control store.
  result<wire_msg::actor_location> locate(const std::string& name);
  wire_msg::actor_location location_here(const std::string& name);
  // Looks the actor `rec` (found by name, lost with `lost_node` as `lost_id`) up again
  // until it shows elsewhere, then sends it the calls that waited; past `until`, fails
  // them.
  void follow_actor(std::shared_ptr<remote_actor_record> rec, std::string lost_node,
                    uint64_t lost_id, std::chrono::steady_clock::time_point until);
  void followed(const std::shared_ptr<remote_actor_record>& rec,
                const std::string& lost_node, uint64_t lost_id,
                std::chrono::steady_clock::time_point until,
                const result<wire_msg::actor_location>& at);
  // Registers the name of `rec`, an actor this node created on another node, with the
  // head: its row there follows the actor when this node restarts it elsewhere.
  result<void> register_name(const std::shared_ptr<remote_actor_record>& rec);
  // Registers `reg` with the head: there, `rec` itself is the row.
  result<void> register_name(detail::actor_record_ptr rec,
                             const wire_msg::actor_register& reg);
  // Creates the actor `m` asks for on this node; its id here.
  result<uint64_t> host_actor(const wire_msg::actor_create& m);
  // Hosts `rec` as `id` for other nodes; returns once calls to it find it.
  void host(uint64_t id, detail::actor_record_ptr rec);
  // The record the calls through `moved`'s handles go to: one that follows the actor,
  // by its name or, without one, by asking its owner, to where the owner restarted it.
  detail::actor_record_ptr follower(host_record& moved);
  // A record of an actor on another node, remembered so its node's death reaches it.
  std::shared_ptr<remote_actor_record>
  track(detail::actor_spec spec, const std::string& node, uint64_t id,
        std::optional<wire_msg::actor_create> created_by = std::nullopt);
  // A handle's record of the named actor that is, or was before its node was lost,
  // `id` on `node`; while `restarting`, its calls wait until it is seen placed anew.
  detail::actor_record_ptr found_at(detail::actor_spec spec, const std::string& node,
                                    uint64_t id, bool restarting);
  // Sends the calls queued for `rec` whose arguments are ready, in order.
  void send_calls(const std::shared_ptr<remote_actor_record>& rec);
  void send_call(const std::shared_ptr<remote_actor_record>& rec, detail::task_ptr call);

  node_link& link_;
  // The ids of the actors hosted here count up from this process's start (its ms <<
  // 12): a node started again under its name never gives an actor an id an earlier life
  // gave one (unless that life hosted 4,096 actors per ms it ran), which other nodes'
  // handles and the owners' records may still hold; a call for a lower id was meant for
  // an earlier life.
  const uint64_t first_actor_;
  std::atomic<uint64_t> next_actor_;
};

} // namespace swarm::actors
