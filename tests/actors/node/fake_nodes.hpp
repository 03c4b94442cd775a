#pragma once

// Three cluster nodes in this process on the fake network, every message really encoded
// and decoded, and the caller choosing what is delivered, dropped or held back: the
// cluster the protocol's tests and the fault simulation run.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "actors/node/cluster_node.hpp"
#include "tests/cluster/test_app.hpp"
#include "transport/fake_network.hpp"

namespace swarm::fake_test {

using namespace std::chrono_literals;
using namespace swarm::cluster_test;
using swarm::wire_msg::fake_network;

inline cluster_config three_node_config() {
  cluster_config cfg;
  cfg.name = "fake";
  cfg.secret = "the-fake-network-secret";
  cfg.gcs_shards = 2;
  cfg.heartbeat_interval = 50ms;
  cfg.node_timeout = 400ms;
  cfg.inline_threshold = 64 * 1024;
  for (auto name : {"head", "worker-1", "worker-2"}) {
    node_spec n;
    n.name = name;
    n.address = "fake";
    n.role = n.name == "head" ? node_spec::role_type::head : node_spec::role_type::worker;
    n.cpus = 1;
    if (n.name == "worker-2") n.resources.set("special", 1);
    if (n.name != "head") n.resources.set("slot", 1); // work only the workers can run
    cfg.nodes.push_back(n);
  }
  return cfg;
}

/// A fake network and a pump thread that delivers what is queued (tests that need a fixed
/// order stop it and call `deliver` themselves). As a base, it outlives the nodes on it.
struct pumped_network {
  fake_network net;
  std::atomic<bool> pumping{true};
  std::thread pump{[this] {
    while (pumping)
      if (net.deliver() == 0) std::this_thread::sleep_for(200us);
  }};

  ~pumped_network() {
    pumping = false;
    pump.join();
  }
};

/// A head and two workers on one fake network, and a driver on the head; `formed` says
/// whether all three joined.
struct fake_nodes : pumped_network {
  application app;
  cluster_config cfg = three_node_config();
  std::unique_ptr<actors::cluster_node> head, w1, w2;
  std::unique_ptr<context> driver;
  bool formed = false;

  /// `tune` changes the configuration, and `also` registers more user code, before the
  /// nodes start.
  explicit fake_nodes(size_t store_bytes = 0,
                      const std::function<void(cluster_config&)>& tune = {},
                      const std::function<void(application&)>& also = {}) {
    if (store_bytes > 0) cfg.object_store_bytes = store_bytes;
    cfg.spill = false; // a full store refuses: what the tests check
    if (tune) tune(cfg);
    register_all(app);
    if (also) also(app);
    head = std::make_unique<actors::cluster_node>(app, cfg, "head", net.factory());
    w1 = std::make_unique<actors::cluster_node>(app, cfg, "worker-1", net.factory());
    w2 = std::make_unique<actors::cluster_node>(app, cfg, "worker-2", net.factory());
    formed = head->wait_for_nodes(3, 10s) == 3;
    driver = std::make_unique<context>(*head, head->new_owner_id());
  }

  ~fake_nodes() {
    driver.reset();
    w1.reset();
    w2.reset();
    head.reset();
  }

  /// Worker-1's process dies: nothing more leaves or reaches it and its connections
  /// close at once, so its stop reaches no one; after `down` it starts again under its
  /// name, a new life that joins the cluster. Nothing else may use `w1` meanwhile.
  void kill_and_restart_worker_1(std::chrono::milliseconds down) {
    auto gone = [](const std::string& a, const std::string& b) {
      return a == "worker-1" || b == "worker-1";
    };
    net.refuse_connections_if(gone);
    net.drop_if([gone](auto& from, auto& to, auto&) { return gone(from, to); });
    for (auto peer : {"head", "worker-2"})
      net.disconnect(peer, "worker-1", "killed by the test");
    w1.reset();
    std::this_thread::sleep_for(down);
    net.drop_if(nullptr);
    net.refuse_connections_if(nullptr);
    w1 = std::make_unique<actors::cluster_node>(app, cfg, "worker-1", net.factory());
  }

  /// Waits (bounded) until `pred` holds.
  static bool eventually(const std::function<bool()>& pred,
                         std::chrono::milliseconds timeout = 5s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!pred()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(5ms);
    }
    return true;
  }
};

} // namespace swarm::fake_test
