#pragma once

// A user's own code, as the README's cluster recipe deploys it: the program that submits
// the work registers it directly, and `swarm start --load` loads it into the workers
// from a library (user_plugin.cpp).

#include <unistd.h>

#include <string>

#include "framework/swarm.hpp"

namespace swarm::user_code {

/// The node the task ran on.
inline std::string placed_on(context& ctx) {
  return ctx.node_name();
}

inline long square(long x) {
  return x * x;
}

/// Sums what it is given; says which node it lives on.
class summer : public actor {
public:
  explicit summer(long start) : sum_(start) {}
  long add(long x) { return sum_ += x; }
  std::string home() { return actor_context().node_name(); }

private:
  long sum_;
};

inline void register_user_code(application& app) {
  app.function("user.placed_on", placed_on);
  app.function("user.square", square);
  app.actor_type<summer>("user.summer")
      .constructor<long>()
      .method("add", &summer::add)
      .method("home", &summer::home);
}

} // namespace swarm::user_code
