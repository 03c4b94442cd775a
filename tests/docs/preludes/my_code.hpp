// Stands for the user's own header that the plugin fragment of
// docs/guide/clusters_and_deployment.md includes: its functions and actor types.
#pragma once

#include <swarm/swarm.hpp>

long square(long x);

struct summer : swarm::actor {
  explicit summer(long start);
  long add(long k);
};
