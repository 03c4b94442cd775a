#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/error.hpp"

namespace swarm {

class context;

namespace detail {
class actor_access;
} // namespace detail

/// Base of user actors: a plain class whose methods the runtime calls one at a time.
/// Framework members carry an `on_` or `actor_` prefix so they never collide with yours.
class actor {
public:
  virtual ~actor();

  /// Runs once the actor is created, before its first call.
  virtual void on_start() {}

  /// Runs when the actor stops for good (killed, out of handles, or runtime shutdown).
  virtual void on_stop() {}

  /// Runs on the fresh instance that replaces a crashed one, before its first call.
  virtual void on_restart(const error& cause) { (void)cause; }

  /// Returns the actor's state to save, after every `actor_options::checkpoint_every`
  /// calls (the latest is kept with the actor's owner, so it outlives the actor's node).
  /// Throwing crashes the actor.
  virtual std::vector<uint8_t> on_checkpoint() { return {}; }

  /// Restores a state `on_checkpoint` returned, on a fresh instance that replaces a
  /// crashed one or one lost with its node, before `on_start`.
  virtual void on_restore(const std::vector<uint8_t>& state) { (void)state; }

protected:
  /// Submits tasks, creates actors and reads objects on behalf of this actor.
  context& actor_context();

  /// The actor's registered type name.
  const std::string& actor_type_name() const;

private:
  friend class detail::actor_access;
  context* ctx_ = nullptr;
  const std::string* type_name_ = nullptr;
};

/// Thrown from an actor method to crash the actor: the call fails and the actor is
/// restarted (fresh instance, `on_restart`) while `max_restarts` allows, else it dies.
/// Other exceptions only fail the call.
class actor_failure : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

namespace detail {

/// Lets the runtime wire an actor to its context.
class actor_access {
public:
  static void attach(actor& a, context& ctx, const std::string& type_name) {
    a.ctx_ = &ctx;
    a.type_name_ = &type_name;
  }
};

} // namespace detail

} // namespace swarm
