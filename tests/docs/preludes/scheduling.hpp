// The names of the fragments of docs/guide/scheduling_and_resources.md.
#pragma once

#include <vector>

#include <swarm/swarm.hpp>

#define SWARM_FRAGMENT_PARAMETERS                                                        \
  swarm::runtime &rt, swarm::task_fn<std::vector<float>(std::vector<float>)> step,       \
      std::vector<float> input
