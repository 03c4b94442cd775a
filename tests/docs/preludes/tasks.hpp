// The names of the fragments of docs/guide/tasks_and_futures.md.
#pragma once

#include <swarm/swarm.hpp>

#define SWARM_FRAGMENT_PARAMETERS swarm::application& app
