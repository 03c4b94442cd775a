#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "framework/swarm.hpp"
#include "tools/bench_workloads.hpp"
#include "tools/netns_link.hpp"

namespace swarm::tools {

/// This process as the head of an `n`-node cluster on 127.0.0.1, and the others (`n2`,
/// `n3`, ...) as child processes (`swarm start ... --node nK`), killed when this goes.
/// The others have a resource `spare = 1` the head lacks: work demanding it runs there.
/// The head's autoscaler may start one node of type "scaled" (1 CPU, `scaled = 1`),
/// stopped once idle for 500 ms.
/// The cluster file stays in `dir` while the cluster lives; both go with it.
/// `node_keys`: more keys of each node's but the head's [[node]] table; `tables`: more
/// tables of the file (e.g. "[tls]\nmode = \"on\"\n"). With `link` (and `n` = 2), the
/// head's threads run in the link's first namespace and n2 in its second, at their
/// addresses there: the nodes talk over the link.
struct cluster_nodes {
  cluster_nodes(const std::string& dir, int n, const std::string& node_keys = "",
                const std::string& tables = "", const netns_link* link = nullptr);
  ~cluster_nodes();
  cluster_nodes(const cluster_nodes&) = delete;
  cluster_nodes& operator=(const cluster_nodes&) = delete;

  /// Kills the process of node `name` (not the head) with SIGKILL.
  void kill(const std::string& name);
  /// Starts node `name` again and waits (bounded) until every node is alive.
  void restart(const std::string& name);
  /// Starts node `name` again, not waiting.
  void start(const std::string& name);
  /// The cluster file.
  const std::string& file() const { return file_; }

  /// Node `i`'s name: "head", then "n2", "n3", ...
  static std::string name_of(int i) {
    return i == 0 ? "head" : "n" + std::to_string(i + 1);
  }

private:
  // With a link: this thread in the head's namespace while the cluster lives, so that
  // whatever it starts or opens for the head is there too. First made, last gone.
  std::optional<netns_link::inside> in_head_;

public:
  application app;
  bench_fns fns;
  cluster_config cfg;
  std::unique_ptr<runtime> rt;
  std::vector<std::shared_ptr<void>> children;

private:
  void wait_joined();

  std::string file_;
  int nodes_;
  const netns_link* link_;
};

} // namespace swarm::tools
