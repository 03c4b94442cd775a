// The user's code as a library `swarm start --load` loads into a node.

#include "framework/plugin.hpp"
#include "tests/cluster/user_code.hpp"

SWARM_REGISTER(app) {
  swarm::user_code::register_user_code(app);
}
