#pragma once

// The consumer's own code: registered by its program, and loaded into `swarm start`
// workers from libconsumer_code.so.

#include <string>

#include <swarm/swarm.hpp>

namespace consumer {

/// The node the task ran on.
inline std::string placed_on(swarm::context& ctx) {
  return ctx.node_name();
}

inline long square(long x) {
  return x * x;
}

/// Sums what it is given; says which node it lives on.
class summer : public swarm::actor {
public:
  explicit summer(long start) : sum_(start) {}
  long add(long x) { return sum_ += x; }
  std::string home() { return actor_context().node_name(); }

private:
  long sum_;
};

inline void register_code(swarm::application& app) {
  app.function("consumer.placed_on", placed_on);
  app.function("consumer.square", square);
  app.actor_type<summer>("consumer.summer")
      .constructor<long>()
      .method("add", &summer::add)
      .method("home", &summer::home);
}

} // namespace consumer
