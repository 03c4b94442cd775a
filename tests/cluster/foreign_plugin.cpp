// A library of user code built against another Swarm: a node refuses to load it. It
// calls nothing of Swarm's, so it loads anywhere.

extern "C" __attribute__((visibility("default"))) const char* swarm_plugin_build() {
  return "swarm 0.0.1; compiler another; CAF 1";
}

extern "C" __attribute__((visibility("default"))) void swarm_plugin_register(void*) {}
