// The names of the fragments of docs/guide/objects_and_memory.md.
#pragma once

#include <vector>

#include <swarm/swarm.hpp>

#define SWARM_FRAGMENT_PARAMETERS                                                        \
  swarm::runtime &rt, std::vector<swarm::object_ref<long>> refs
