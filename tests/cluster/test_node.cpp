// A node process for the multi-node tests: `swarm_test_node --config FILE --node NAME`.

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "tests/cluster/test_app.hpp"

namespace {

// Connects as a client from what its environment says (as a program run with `swarm
// job submit` does) and runs `body` on the cluster; its exit code.
template <class Body> int as_client(const char* what, Body body) {
  auto o = swarm::client_options_from_env();
  if (!o) {
    std::fprintf(stderr, "%s: %s\n", what, o.err().message.c_str());
    return 1;
  }
  swarm::application app;
  swarm::cluster_test::register_all(app);
  swarm::runtime rt{app, *o};
  return body(app, rt);
}

// A job: runs tasks on the cluster and prints their sum.
int client_job() {
  return as_client("client job", [](swarm::application& app, swarm::runtime& rt) {
    auto add = app.find_function<int(int, int)>("add").value();
    std::vector<swarm::object_ref<int>> refs;
    for (int i = 1; i <= 10; ++i)
      refs.push_back(rt.submit(add, i, i));
    int sum = 0;
    for (auto& r : refs)
      sum += r.get(std::chrono::seconds(20)).value();
    std::printf("client job: 10 tasks on the cluster, sum %d\n", sum);
    return 0;
  });
}

// A client that stays connected until it is killed.
int client_idle() {
  return as_client("client", [](swarm::application&, swarm::runtime&) {
    std::printf("client: connected\n");
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::minutes(5));
    return 0;
  });
}

} // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string{argv[1]} == "--client-job") return client_job();
  if (argc == 2 && std::string{argv[1]} == "--client-idle") return client_idle();
  std::string config, node;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--config") config = argv[i + 1];
    if (flag == "--node") node = argv[i + 1];
  }
  if (config.empty() || node.empty()) {
    std::fprintf(stderr, "usage: swarm_test_node --config FILE --node NAME\n");
    return 2;
  }
  auto cfg = swarm::load_cluster_config(config);
  if (!cfg) {
    std::fprintf(stderr, "swarm: %s\n", cfg.err().message.c_str());
    return 1;
  }
  swarm::application app;
  swarm::cluster_test::register_all(app);
  return swarm::serve(app, *cfg, node);
}
