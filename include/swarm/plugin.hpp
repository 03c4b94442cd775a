#pragma once

// What a library of user code needs to register its functions and actor types with the
// nodes that load it (`SWARM_REGISTER`): `#include <swarm/plugin.hpp>`.
#include "framework/plugin.hpp"
