// The prelude of a fragment whose page names none: Swarm, an application and a runtime.
#pragma once

#include <swarm/swarm.hpp>

#define SWARM_FRAGMENT_PARAMETERS swarm::application &app, swarm::runtime &rt
