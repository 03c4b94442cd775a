// The library of user code the workers load: `swarm start --load libconsumer_code.so`.

#include "code.hpp"
#include <swarm/plugin.hpp>

SWARM_REGISTER(app) {
  consumer::register_code(app);
}
