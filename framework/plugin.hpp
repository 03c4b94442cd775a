#pragma once

// A library of user code that `swarm start --load lib.so` (or the cluster file's
// `[code] libraries`) loads into a node, so that the node can run its functions and
// actors. Build it as a shared library against the same Swarm (the `swarm` tool
// refuses one built against another), and define its entry point once:
//
//     #include "framework/plugin.hpp"
//
//     SWARM_REGISTER(app) {
//       app.function("where", where);
//       app.actor_type<counter>("counter").constructor<int>().method("add",
//       &counter::add);
//     }
//
// The program that submits the work registers the same functions, under the same names
// and signatures (a node that differs is refused when it joins).

#include <caf/config.hpp>

#include "framework/application.hpp"
#include "framework/version.hpp"

/// Defines the entry point of a library of user code: its body registers on `app`.
#define SWARM_REGISTER(app)                                                              \
  extern "C" __attribute__((visibility("default"))) const char* swarm_plugin_build() {   \
    return SWARM_BUILD_ID;                                                               \
  }                                                                                      \
  extern "C" __attribute__((visibility("default"))) void swarm_plugin_register(          \
      ::swarm::application& app)
