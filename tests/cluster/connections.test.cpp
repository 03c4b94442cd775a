// Connections on demand between node processes: a worker dials another only once it has
// something for it, what it sends meanwhile arrives, and idle connections close.

#include <doctest/doctest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "tests/cluster/http_get.hpp"
#include "tests/cluster/three_nodes.hpp"

using namespace std::chrono_literals;
using namespace swarm::cluster_test;

namespace {

// The value of `metric` for `node` in a Prometheus text `body`; -1 when absent.
double metric_of(const std::string& body, const std::string& metric,
                 const std::string& node) {
  auto line = metric + "{node=\"" + node + "\"} ";
  auto at = body.find(line);
  if (at == std::string::npos) return -1;
  return std::strtod(body.c_str() + at + line.size(), nullptr);
}

// The head in this process; worker-1 (serving its metrics) and worker-2 as processes.
struct metered_cluster {
  std::string dir = make_dir();
  std::string config = dir + "/cluster.toml";
  uint16_t metrics = free_port();
  swarm::cluster_config cfg;
  swarm::application app;
  std::unique_ptr<swarm::runtime> rt;
  std::unique_ptr<node_process> w1, w2;

  // `cluster_keys`: more keys of the file's [cluster] table.
  explicit metered_cluster(const std::string& cluster_keys = "") {
    auto text = cluster_file(free_port(), free_port(), free_port(), secret);
    text.insert(text.find("[limits]"), cluster_keys);
    text.insert(text.find("name = \"worker-1\""),
                "metrics_port = " + std::to_string(metrics) + "\n");
    write(config, text);
    cfg = swarm::load_cluster_config(config).value();
    register_all(app);
    rt = std::make_unique<swarm::runtime>(app, cfg, "head");
    for (auto* w : {&w1, &w2}) {
      std::string name = w == &w1 ? "worker-1" : "worker-2";
      *w = std::make_unique<node_process>(
          SWARM_TEST_NODE, std::vector<std::string>{"--config", config, "--node", name},
          dir + "/" + name + ".log");
    }
    REQUIRE_MESSAGE(rt->wait_for_nodes(3, 20s) == 3, w1->log(), w2->log());
    // Formed: worker-1 knows worker-2 from the table, but has sent it nothing.
    REQUIRE(eventually(10s, [&] { return of_w1("swarm_nodes_alive") == 3; }));
  }

  ~metered_cluster() {
    w1.reset();
    w2.reset();
    rt.reset();
  }

  double of_w1(const std::string& metric) {
    return metric_of(http_get(metrics, "/metrics"), metric, "worker-1");
  }

  // Work for worker-2 submitted on worker-1, its value read here: the task goes from
  // worker-1 to worker-2, and the nap's result back to worker-1, its owner.
  void work_from_w1_on_w2() {
    auto mark_on = app.find_function<swarm::object_ref<int>(
        const std::string&, const std::string&, int, const std::string&, int)>(
                          "mark_nap_on")
                       .value();
    swarm::task_options on_w1;
    on_w1.node = "worker-1";
    auto napped =
        rt->submit(on_w1, mark_on, dir + "/order", "on worker-2", 10, "worker-2", 0)
            .get(20s);
    REQUIRE_MESSAGE(napped, w1->log(), w2->log());
    CHECK(*napped == 10);
  }
};

} // namespace

TEST_CASE("workers dial each other only once one has work for the other, the work sent "
          "meanwhile arrives, and the metrics count the connections") {
  metered_cluster c;
  CHECK(c.of_w1("swarm_peers_connected") == 1); // the head
  CHECK(c.of_w1("swarm_dials_total") == 0);
  // The send dials worker-2; the task and what follows go over that connection.
  for (int i = 0; i < 3; ++i)
    c.work_from_w1_on_w2();
  CHECK(c.of_w1("swarm_peers_connected") == 2);
  CHECK(c.of_w1("swarm_dials_total") == 1); // once, however many sends found none
  CHECK(c.of_w1("swarm_messages_undelivered_total") == 0);
  // One connection to each of the head and worker-2: nothing large went, so no bulk one.
  CHECK(c.of_w1("swarm_connections") == 2);
}

TEST_CASE("a connection between workers idle for idle_connection_ms closes at both ends "
          "with neither node reported down, and the next work dials again") {
  metered_cluster c{"idle_connection_ms = 500\n"};
  c.work_from_w1_on_w2();
  CHECK(c.of_w1("swarm_dials_total") == 1);
  // Bounded: idle for 500 ms, checked every 125 ms, then both ends closing.
  REQUIRE(eventually(10s, [&] { return c.of_w1("swarm_peers_connected") == 1; }));
  CHECK(c.of_w1("swarm_connections_idle_closed_total") >= 1);
  CHECK(c.of_w1("swarm_nodes_alive") == 3);
  c.work_from_w1_on_w2();
  CHECK(c.of_w1("swarm_dials_total") == 2);
  CHECK(c.of_w1("swarm_messages_undelivered_total") == 0);
  // The head's connections carry heartbeats: never idle, never closed.
  CHECK(c.w1->log().find("idle connection with node 'head'") == std::string::npos);
  auto status = swarm::cluster_status(c.cfg, 2s);
  REQUIRE(status);
  CHECK(status->alive() == 3);
}
