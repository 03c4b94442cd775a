// The names of the fragments of docs/guide/actors_and_supervision.md.
#pragma once

#include <chrono>

#include <swarm/swarm.hpp>

using namespace std::chrono_literals;

struct counter : swarm::actor {
  explicit counter(int start);
  long add(long k);
};

struct stage : swarm::actor {};

#define SWARM_FRAGMENT_PARAMETERS                                                        \
  swarm::application &app, swarm::runtime &rt, swarm::actor_class<stage> stage_t
