// The names of the fragments of docs/guide/clusters_and_deployment.md.
#pragma once

#include <string>

#include <swarm/swarm.hpp>

std::string read_secret();

#define SWARM_FRAGMENT_PARAMETERS                                                        \
  swarm::application &app, swarm::task_fn<long(long)> square,                            \
      swarm::task_fn<std::string()> where_fn
