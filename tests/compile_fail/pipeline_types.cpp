// Compiled, not run: a pipeline whose stage takes what the stage before does not return
// must not compile. With SWARM_WELL_TYPED the same stages in the right order compile.

#include <string>

#include "framework/pipeline.hpp"

struct describe : swarm::actor {
  std::string say(int x) { return std::to_string(x); }
};

struct measure : swarm::actor {
  int length(const std::string& s) { return static_cast<int>(s.size()); }
};

void build(swarm::application& app) {
  auto describe_t = app.actor_type<describe>("describe");
  auto measure_t = app.actor_type<measure>("measure");
#ifdef SWARM_WELL_TYPED
  auto p = swarm::pipeline<int>{}
               .then(describe_t, &describe::say)
               .then(measure_t, &measure::length);
#else
  // `say` gives a std::string; `say` again takes an int.
  auto p = swarm::pipeline<int>{}
               .then(describe_t, &describe::say)
               .then(describe_t, &describe::say);
#endif
  (void)p;
}
