// A node process for the multi-node tests: `swarm_test_node --config FILE --node NAME`,
// or one joining by the head's address: `--address HOST:PORT --secret S --node NAME`
// (`--resource R`, `--node-type T`)
// (the secret from SWARM_SECRET without `--secret`).

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "framework/tls_env.hpp"
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
  std::string config, node, address, secret, resource, node_type;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--config") config = argv[i + 1];
    if (flag == "--node") node = argv[i + 1];
    if (flag == "--address") address = argv[i + 1];
    if (flag == "--secret") secret = argv[i + 1];
    if (flag == "--resource") resource = argv[i + 1];
    if (flag == "--node-type") node_type = argv[i + 1];
  }
  swarm::application app;
  swarm::cluster_test::register_all(app);
  if (!address.empty()) {
    // Joins the cluster whose head is at `address` under `node`, offering one CPU and
    // one of `resource` when given.
    auto head = swarm::head_address(address, "--address");
    if (!head) {
      std::fprintf(stderr, "swarm: %s\n", head.err().message.c_str());
      return 2;
    }
    if (secret.empty())
      if (const char* from_env = std::getenv("SWARM_SECRET")) secret = from_env;
    head->secret = secret;
    // As `swarm start --address` takes them.
    auto tls = swarm::tls_from_env();
    if (!tls) {
      std::fprintf(stderr, "swarm: %s\n", tls.err().message.c_str());
      return 2;
    }
    head->tls = *tls;
    head->name = node;
    swarm::join_options j{*head, {}};
    j.node.cpus = 1;
    if (!resource.empty()) j.node.resources.set(resource, 1);
    j.node.node_type = node_type;
    auto cfg = swarm::join_cluster(j);
    if (!cfg) {
      std::fprintf(stderr, "swarm: %s\n", cfg.err().message.c_str());
      return 1;
    }
    return swarm::serve(app, *cfg, cfg->nodes.back().name);
  }
  if (config.empty() || node.empty()) {
    std::fprintf(stderr,
                 "usage: swarm_test_node --config FILE --node NAME\n"
                 "       swarm_test_node --address HOST:PORT --secret S --node NAME "
                 "[--resource R] [--node-type T]\n");
    return 2;
  }
  auto cfg = swarm::load_cluster_config(config);
  if (!cfg) {
    std::fprintf(stderr, "swarm: %s\n", cfg.err().message.c_str());
    return 1;
  }
  return swarm::serve(app, *cfg, node);
}
