#include "tools/bench_cluster.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>

#include "tools/bench_floors.hpp"

namespace swarm::tools {

using namespace std::chrono_literals;

cluster_nodes::cluster_nodes(const std::string& dir, int n, const std::string& node_keys,
                             const std::string& tables, const netns_link* link)
    : fns{register_bench(app)}, file_{dir + "/cluster.toml"}, nodes_{n}, link_{link} {
  if (link && n != 2)
    throw std::invalid_argument("cluster_nodes: a link joins two nodes, not " +
                                std::to_string(n));
  auto& file = file_;
  std::random_device rd;
  std::string secret = "bench-" + std::to_string(rd()) + "-" + std::to_string(rd());
  if (link) in_head_.emplace(*link, 0);
  auto address = [&](int i) {
    return link ? netns_link::address(i) : std::string{"127.0.0.1"};
  };
  {
    // Each namespace of a link is the nodes' own: any port is free there.
    auto ports = link ? std::vector<uint16_t>{7300, 7300}
                      : free_local_ports(static_cast<size_t>(n)).value();
    std::ofstream out{file};
    // Heartbeats every 50 ms, so their gaps under load are measured finely.
    out << "[cluster]\nname = \"bench\"\nsecret = \"" << secret
        << "\"\nheartbeat_ms = 50\n";
    for (int i = 0; i < n; ++i)
      out << "[[node]]\nname = \"" << name_of(i) << "\"\naddress = \"" << address(i)
          << "\"\nport = " << ports[static_cast<size_t>(i)]
          << (i == 0 ? "\nrole = \"head\"\n"
                     : "\nresources = { spare = 1, at_" + name_of(i) + " = 1 }\n" +
                           node_keys);
    out << "[autoscaler]\n[[autoscaler.node_type]]\nname = \"scaled\"\ncpus = 1\n"
           "resources = { scaled = 1 }\nmax = 1\nidle_timeout_ms = 500\n"
        << tables;
  }
  cfg = load_cluster_config(file).value();
  rt = std::make_unique<runtime>(app, cfg, "head");
  children.resize(static_cast<size_t>(n - 1));
  for (int i = 1; i < n; ++i)
    start(name_of(i));
  try {
    wait_joined();
  } catch (...) {
    std::remove(file.c_str());
    throw;
  }
}

cluster_nodes::~cluster_nodes() {
  std::remove(file_.c_str());
  ::rmdir(file_.substr(0, file_.rfind('/')).c_str());
}

void cluster_nodes::wait_joined() {
  bool joined = false;
  for (int i = 0; i < 400 && !joined; ++i) {
    auto st = cluster_status(cfg, 1s);
    joined = st && st->alive() == static_cast<size_t>(nodes_);
    if (!joined) std::this_thread::sleep_for(50ms);
  }
  if (!joined)
    throw std::runtime_error("the " + std::to_string(nodes_ - 1) +
                             " other node(s) did not all join within 20 s");
}

void cluster_nodes::kill(const std::string& name) {
  for (int i = 1; i < nodes_; ++i)
    if (name_of(i) == name) children[static_cast<size_t>(i - 1)].reset();
}

void cluster_nodes::start(const std::string& name) {
  for (int i = 1; i < nodes_; ++i)
    if (name_of(i) == name) {
      // Without metrics: a node's default metrics port (its port + 1000) may be another
      // node's or in use, which stops that node, and the bench reads none.
      std::optional<netns_link::inside> in_node;
      if (link_) in_node.emplace(*link_, 1);
      children[static_cast<size_t>(i - 1)] =
          start_self({"start", "--config", file_, "--node", name, "--no-metrics"});
    }
}

void cluster_nodes::restart(const std::string& name) {
  start(name);
  wait_joined();
}

} // namespace swarm::tools
