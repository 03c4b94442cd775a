#pragma once

// The cluster the cluster tests share: this test process is the head (and the driver),
// two node processes are the workers, on 127.0.0.1.

#include <doctest/doctest.h>

#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/cluster/node_process.hpp"
#include "tests/cluster/test_app.hpp"

namespace swarm::cluster_test {

using namespace std::chrono_literals;

inline const std::string secret = "the-secret-of-the-test-cluster";

inline std::string make_dir() {
  char tmpl[] = "/tmp/swarm-cluster-test-XXXXXX";
  return ::mkdtemp(tmpl);
}

inline std::string cluster_file(uint16_t head, uint16_t w1, uint16_t w2,
                                const std::string& key, const std::string& limits = "",
                                const std::string& head_keys = "",
                                const std::string& worker_keys = "",
                                const std::string& worker_resources = "") {
  return "[cluster]\nname = \"test\"\nsecret = \"" + key +
         "\"\ngcs_shards = 2\nheartbeat_ms = 100\nnode_timeout_ms = 1000\n"
         "[limits]\ninline_threshold = \"64KiB\"\n" +
         limits + "[[node]]\nname = \"head\"\naddress = \"127.0.0.1\"\nport = " +
         std::to_string(head) + "\nrole = \"head\"\ncpus = 2\n" + head_keys +
         "[[node]]\nname = \"worker-1\"\naddress = \"127.0.0.1\"\nport = " +
         std::to_string(w1) + "\ncpus = 1\n" + worker_keys +
         "[node.resources]\nslot = 1\n" + worker_resources +
         "[[node]]\nname = \"worker-2\"\naddress = \"127.0.0.1\"\nport = " +
         std::to_string(w2) + "\ncpus = 1\n" + worker_keys +
         "[node.resources]\nspecial = 1\nslot = 1\n" + worker_resources;
}

inline void write(const std::string& path, const std::string& text) {
  std::ofstream{path} << text;
}

/// The head in this process, two workers as processes.
struct three_nodes {
  std::string dir = make_dir();
  std::string config = dir + "/cluster.toml";
  swarm::cluster_config cfg;
  swarm::application app;
  std::unique_ptr<node_process> w1, w2;
  std::unique_ptr<swarm::runtime> rt;

  /// `limits`: more keys of the file's [limits] table; `head_keys`: of the head's
  /// [[node]]; `worker_keys`: of each worker's; `worker_resources`: more of each
  /// worker's resources, as keys.
  explicit three_nodes(const std::string& limits = "", const std::string& head_keys = "",
                       const std::string& worker_keys = "",
                       const std::string& worker_resources = "") {
    write(config, cluster_file(free_port(), free_port(), free_port(), secret, limits,
                               head_keys, worker_keys, worker_resources));
    cfg = swarm::load_cluster_config(config).value();
    register_all(app);
    rt = std::make_unique<swarm::runtime>(app, cfg, "head");
    w1 = start("worker-1");
    w2 = start("worker-2");
    // Bounded: both workers join within 10 s.
    for (int i = 0; i < 200 && alive() < 3; ++i)
      std::this_thread::sleep_for(50ms);
    REQUIRE(alive() == 3);
  }

  ~three_nodes() {
    w1.reset();
    w2.reset();
    rt.reset();
  }

  std::unique_ptr<node_process> start(const std::string& name,
                                      const std::string& file = {}) {
    return std::make_unique<node_process>(
        SWARM_TEST_NODE,
        std::vector<std::string>{"--config", file.empty() ? config : file, "--node",
                                 name},
        dir + "/" + name + ".log");
  }

  size_t alive() {
    auto s = swarm::cluster_status(cfg, 2s);
    return s ? s->alive() : 0;
  }

  /// Starts a 3 s task on one of the workers; returns it and the worker running it (the
  /// victim) and the other one.
  struct busy_worker {
    swarm::object_ref<int> task;
    std::unique_ptr<node_process>* victim;
    std::unique_ptr<node_process>* survivor;
  };
  busy_worker start_long_task() {
    auto nap = app.find_function<int(const std::string&, int)>("nap_pid").value();
    swarm::task_options on_a_worker;
    on_a_worker.resources.set("slot", 1); // only the workers have it
    auto mark = dir + "/started";
    std::remove(mark.c_str());
    auto r = rt->submit(on_a_worker, nap, mark, 3000);
    // Bounded: the task writes its node's pid when it starts.
    int pid = 0;
    for (int i = 0; i < 200 && pid == 0; ++i) {
      std::ifstream{mark} >> pid;
      if (pid == 0) std::this_thread::sleep_for(25ms);
    }
    REQUIRE((pid == w1->pid() || pid == w2->pid()));
    return {r, pid == w1->pid() ? &w1 : &w2, pid == w1->pid() ? &w2 : &w1};
  }

  swarm::task_options on(const std::string& node) {
    swarm::task_options o;
    o.node = node;
    return o;
  }
};


} // namespace swarm::cluster_test
