#pragma once

// Everything a program using Swarm needs: `#include <swarm/swarm.hpp>`. The paths of
// the headers themselves ("framework/swarm.hpp" and the others) still work in this
// release, and are deprecated.
#include "framework/swarm.hpp"
