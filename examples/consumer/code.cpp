// The library of user code the workers load: `swarm start --load libconsumer_code.so`.

#include "code.hpp"
#include "framework/plugin.hpp"

SWARM_REGISTER(app) {
  consumer::register_code(app);
}
