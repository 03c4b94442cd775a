#pragma once

// A cluster whose head and workers are node processes (swarm_test_node), started from a
// cluster file in a fresh folder: for tests that kill, restart or stop nodes.

#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "tests/cluster/node_process.hpp"
#include "tests/cluster/test_app.hpp"

namespace swarm::cluster_test {

// A folder under /tmp for one test's files, removed after it.
struct test_dir {
  std::string path;
  test_dir() {
    char tmpl[] = "/tmp/swarm-process-cluster-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~test_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  test_dir(const test_dir&) = delete;
  test_dir& operator=(const test_dir&) = delete;
};

// A cluster file of the head and `workers`, with `cluster_lines` added to [cluster].
inline std::string process_cluster_file(const std::string& cluster_lines,
                                        const std::vector<std::string>& workers) {
  auto node = [](const std::string& name, const char* role) {
    return "[[node]]\nname = \"" + name +
           "\"\naddress = \"127.0.0.1\"\nport = " + std::to_string(free_port()) +
           "\nrole = \"" + role + "\"\ncpus = 1\n";
  };
  auto out =
      "[cluster]\nname = \"processes\"\nsecret = \"the-secret-of-the-process-tests\"\n"
      "heartbeat_ms = 100\nnode_timeout_ms = 1000\n" +
      cluster_lines + node("head", "head");
  for (auto& w : workers)
    out += node(w, "worker");
  return out;
}

// The test's cluster: its file in a fresh folder, node processes started from it by name.
// "@DIR@" in `cluster_lines` stands for the folder.
struct process_cluster {
  process_cluster(std::string cluster_lines, const std::vector<std::string>& workers) {
    for (auto at = cluster_lines.find("@DIR@"); at != std::string::npos;
         at = cluster_lines.find("@DIR@"))
      cluster_lines.replace(at, 5, tmp.path);
    std::ofstream{config} << process_cluster_file(cluster_lines, workers);
    cfg = load_cluster_config(config).value();
  }

  std::unique_ptr<node_process> start(const std::string& name, const std::string& log) {
    return std::make_unique<node_process>(
        SWARM_TEST_NODE, std::vector<std::string>{"--config", config, "--node", name},
        tmp.path + "/" + log);
  }

  /// Starts node `name`, which joins by the head's address (no row in the file),
  /// offering one CPU and one of `resource` when given.
  std::unique_ptr<node_process> join(const std::string& name, const std::string& log,
                                     const std::string& resource = {}) {
    std::vector<std::string> args{
        "--address", cfg.head().address + ":" + std::to_string(cfg.head().port),
        "--secret",  cfg.secret,
        "--node",    name};
    if (!resource.empty()) args.insert(args.end(), {"--resource", resource});
    return std::make_unique<node_process>(SWARM_TEST_NODE, std::move(args),
                                          tmp.path + "/" + log);
  }

  result<cluster_state> status() { return cluster_status(cfg, std::chrono::seconds(2)); }

  /// Starts the nodes `names` (each logging to NAME.log) and waits, bounded, until all
  /// are alive.
  std::vector<std::unique_ptr<node_process>> start_alive(
      const std::vector<std::string>& names) {
    std::vector<std::unique_ptr<node_process>> out;
    for (auto& n : names)
      out.push_back(start(n, n + ".log"));
    REQUIRE(eventually(std::chrono::seconds(20), [&] {
      auto s = status();
      return s && s->alive() == names.size();
    }));
    return out;
  }

  /// `n` tasks `nap_pid` of `ms` each from `client`, each writing its node's pid to
  /// nap-I in the folder.
  std::vector<object_ref<int>> naps(runtime& client, const application& app, int n,
                                    int ms, const task_options& opts = {}) {
    auto nap = app.find_function<int(const std::string&, int)>("nap_pid").value();
    std::vector<object_ref<int>> refs;
    for (int i = 0; i < n; ++i)
      refs.push_back(client.submit(opts, nap, nap_file(i), ms));
    return refs;
  }

  std::string nap_file(int i) const { return tmp.path + "/nap-" + std::to_string(i); }

  /// How many of `refs` succeed, each waited for up to 30 s; the errors are reported.
  static int succeeded(std::vector<object_ref<int>>& refs) {
    int done = 0;
    for (auto& r : refs) {
      auto v = r.get(std::chrono::seconds(30));
      if (!v) MESSAGE(v.err().to_string());
      done += v.has_value();
    }
    return done;
  }

  test_dir tmp;
  std::string config = tmp.path + "/cluster.toml";
  cluster_config cfg;
};

/// A client named `client` of the cluster of `c`, with the test's functions.
struct test_client {
  test_client(process_cluster& c, const std::string& client) {
    register_all(app);
    rt = std::make_unique<runtime>(app, client_of(c.cfg, client));
  }

  /// Where the head places work only a node with "special" can run.
  std::string where_special() {
    auto name = app.find_function<std::string()>("node_name").value();
    task_options special;
    special.resources.set("special", 1);
    return rt->submit(special, name).get(std::chrono::seconds(20)).value();
  }

  application app;
  std::unique_ptr<runtime> rt;
};

inline const node_status* find_node(const cluster_state& s, const std::string& n) {
  auto i =
      std::find_if(s.nodes.begin(), s.nodes.end(), [&](auto& x) { return x.name == n; });
  return i == s.nodes.end() ? nullptr : &*i;
}

} // namespace swarm::cluster_test
