#include "tools/bench_cluster.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <stdexcept>
#include <thread>

#include "tools/bench_floors.hpp"

namespace swarm::tools {

using namespace std::chrono_literals;

cluster_nodes::cluster_nodes(const std::string& dir, int n) : fns{register_bench(app)} {
  std::string file = dir + "/cluster.toml";
  std::random_device rd;
  std::string secret = "bench-" + std::to_string(rd()) + "-" + std::to_string(rd());
  {
    auto ports = free_local_ports(static_cast<size_t>(n)).value();
    std::ofstream out{file};
    // Heartbeats every 50 ms, so their gaps under load are measured finely.
    out << "[cluster]\nname = \"bench\"\nsecret = \"" << secret
        << "\"\nheartbeat_ms = 50\n";
    for (int i = 0; i < n; ++i)
      out << "[[node]]\nname = \"" << name_of(i)
          << "\"\naddress = \"127.0.0.1\"\nport = " << ports[static_cast<size_t>(i)]
          << (i == 0 ? "\nrole = \"head\"\n" : "\n");
  }
  cfg = load_cluster_config(file).value();
  rt = std::make_unique<runtime>(app, cfg, "head");
  for (int i = 1; i < n; ++i)
    children.push_back(start_self({"start", "--config", file, "--node", name_of(i)}));
  bool joined = false;
  for (int i = 0; i < 400 && !joined; ++i) {
    auto st = cluster_status(cfg, 1s);
    joined = st && st->alive() == static_cast<size_t>(n);
    if (!joined) std::this_thread::sleep_for(50ms);
  }
  std::remove(file.c_str());
  if (!joined)
    throw std::runtime_error("the " + std::to_string(n - 1) +
                             " other node(s) did not all join within 20 s");
}

} // namespace swarm::tools
