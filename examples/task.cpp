// A task: a plain function registered by name, run somewhere, its result read through a
// future.
#include <cstdio>

#include "framework/swarm.hpp"

int main() {
  swarm::application app;
  auto square = app.function("square", [](long x) { return x * x; });

  swarm::runtime rt{app}; // an embedded single-node cluster sized to this machine

  swarm::object_ref<long> f = rt.submit(square, 12L); // returns at once
  long v = f.get().value();                           // waits for the result
  std::printf("square(12) = %ld\n", v);
  return v == 144 ? 0 : 1;
}
