// Connections on demand between node processes: a worker dials another only once it has
// something for it, and what it sends meanwhile arrives.

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

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

} // namespace

TEST_CASE("workers dial each other only once one has work for the other, the work sent "
          "meanwhile arrives, and the metrics count the connections") {
  auto dir = make_dir();
  auto config = dir + "/cluster.toml";
  auto metrics = free_port();
  auto text = cluster_file(free_port(), free_port(), free_port(), secret);
  text.insert(text.find("name = \"worker-1\""),
              "metrics_port = " + std::to_string(metrics) + "\n");
  write(config, text);
  auto cfg = swarm::load_cluster_config(config).value();
  swarm::application app;
  register_all(app);
  swarm::runtime rt{app, cfg, "head"};
  auto start = [&](const std::string& name) {
    return node_process{
        SWARM_TEST_NODE, {"--config", config, "--node", name}, dir + "/" + name + ".log"};
  };
  auto w1 = start("worker-1");
  auto w2 = start("worker-2");
  REQUIRE_MESSAGE(rt.wait_for_nodes(3, 20s) == 3, w1.log(), w2.log());
  auto of_w1 = [&](const std::string& metric) {
    return metric_of(http_get(metrics, "/metrics"), metric, "worker-1");
  };
  // Formed: worker-1 knows worker-2 from the table, but has sent it nothing.
  REQUIRE(eventually(10s, [&] { return of_w1("swarm_nodes_alive") == 3; }));
  CHECK(of_w1("swarm_peers_connected") == 1); // the head
  CHECK(of_w1("swarm_dials_total") == 0);

  // Work for worker-2 submitted on worker-1: the send dials worker-2, and the task (and
  // its nap's result back to worker-1, the owner) go over that connection.
  auto mark_on = app.find_function<swarm::object_ref<int>(
      const std::string&, const std::string&, int, const std::string&, int)>(
                        "mark_nap_on")
                     .value();
  swarm::task_options on_w1;
  on_w1.node = "worker-1";
  auto order = dir + "/order";
  for (int i = 0; i < 3; ++i) {
    // The ref worker-1 returns is read through: its value is the nap's.
    auto napped =
        rt.submit(on_w1, mark_on, order, "on worker-2", 10, "worker-2", 0).get(20s);
    REQUIRE_MESSAGE(napped, w1.log(), w2.log());
    CHECK(*napped == 10);
  }
  CHECK(of_w1("swarm_peers_connected") == 2);
  CHECK(of_w1("swarm_dials_total") == 1); // once, however many sends found none
  CHECK(of_w1("swarm_messages_undelivered_total") == 0);
  // One connection to each of the head and worker-2: nothing large went, so no bulk one.
  CHECK(of_w1("swarm_connections") == 2);
}
