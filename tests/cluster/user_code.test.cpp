// The README's cluster recipe with the user's own code: `swarm start` workers load it
// from a library, the user's program joins as the head and submits work to them.

#include <doctest/doctest.h>

#include <unistd.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "examples/consumer/code.hpp"
#include "tests/cluster/http_get.hpp"
#include "tests/cluster/node_process.hpp"

using namespace std::chrono_literals;
using namespace swarm::cluster_test;
using namespace consumer;

namespace {

std::string make_dir() {
  char tmpl[] = "/tmp/swarm-user-code-XXXXXX";
  return ::mkdtemp(tmpl);
}

// Workers offer `worker`, which the head does not: work asking for it runs on them.
std::string cluster_file(uint16_t head, uint16_t w1, uint16_t w2,
                         const std::string& code) {
  return "[cluster]\nname = \"user-code\"\nsecret = "
         "\"the-secret-of-the-user-code-test\"\n"
         "heartbeat_ms = 100\nnode_timeout_ms = 1000\n" +
         code + "[[node]]\nname = \"head\"\naddress = \"127.0.0.1\"\nport = " +
         std::to_string(head) +
         "\nrole = \"head\"\ncpus = 1\n"
         "[[node]]\nname = \"worker-1\"\naddress = \"127.0.0.1\"\nport = " +
         std::to_string(w1) +
         "\ncpus = 2\nresources = { worker = 8 }\n"
         "[[node]]\nname = \"worker-2\"\naddress = \"127.0.0.1\"\nport = " +
         std::to_string(w2) + "\ncpus = 2\nresources = { worker = 8 }\n";
}

} // namespace

TEST_CASE("workers started with swarm start load the user's library and run every one of "
          "its unpinned tasks and actors") {
  auto dir = make_dir();
  auto ports = std::vector<uint16_t>{free_port(), free_port(), free_port()};
  // worker-1 gets the library on its command line, worker-2 from its cluster file.
  auto plain = dir + "/cluster.toml", with_code = dir + "/with-code.toml";
  std::ofstream{plain} << cluster_file(ports[0], ports[1], ports[2], "");
  std::ofstream{with_code} << cluster_file(ports[0], ports[1], ports[2],
                                           "[code]\nlibraries = [\"" +
                                               std::string{SWARM_USER_PLUGIN} + "\"]\n");
  auto cfg = swarm::load_cluster_config(plain).value();
  REQUIRE(swarm::load_cluster_config(with_code).value().code_libraries ==
          std::vector<std::string>{SWARM_USER_PLUGIN});

  swarm::application app;
  register_code(app);
  auto rt = std::make_unique<swarm::runtime>(app, cfg, "head");
  node_process w1{
      SWARM_CLI,
      {"start", "--config", plain, "--node", "worker-1", "--load", SWARM_USER_PLUGIN},
      dir + "/worker-1.log"};
  node_process w2{SWARM_CLI,
                  {"start", "--config", with_code, "--node", "worker-2"},
                  dir + "/worker-2.log"};
  REQUIRE_MESSAGE(rt->wait_for_nodes(3, 20s) == 3,
                  "worker-1: " << w1.log() << "\nworker-2: " << w2.log());

  swarm::task_options on_workers;
  on_workers.resources.set("worker", 1);
  auto placed_on = app.find_function<std::string()>("consumer.placed_on").value();
  auto square = app.find_function<long(long)>("consumer.square").value();
  std::vector<swarm::object_ref<std::string>> where;
  std::vector<swarm::object_ref<long>> squares;
  for (long i = 0; i < 100; ++i) {
    where.push_back(rt->submit(on_workers, placed_on));
    squares.push_back(rt->submit(on_workers, square, i));
  }
  std::set<std::string> nodes;
  for (long i = 0; i < 100; ++i) {
    auto node = where[static_cast<size_t>(i)].get(30s);
    REQUIRE_MESSAGE(node, node.err().message);
    nodes.insert(*node);
    CHECK(squares[static_cast<size_t>(i)].get(30s).value() == i * i);
  }
  CHECK(nodes <= std::set<std::string>{"worker-1", "worker-2"});
  CHECK_FALSE(nodes.empty());

  auto summer_t = app.find_actor_type<summer>("consumer.summer").value();
  swarm::actor_options on_a_worker;
  on_a_worker.resources.set("worker", 1);
  for (long i = 0; i < 10; ++i) {
    auto a = rt->spawn(on_a_worker, summer_t, i);
    auto home = a.call(&summer::home).get(30s);
    REQUIRE_MESSAGE(home, home.err().message);
    CHECK((*home == "worker-1" || *home == "worker-2"));
    CHECK(a.call(&summer::add, 5L).get(30s).value() == i + 5);
  }
  rt.reset();
}

TEST_CASE("swarm start refuses a library built against another Swarm, or one that is "
          "missing, naming it and the node") {
  auto dir = make_dir();
  auto config = dir + "/cluster.toml";
  std::ofstream{config} << cluster_file(free_port(), free_port(), free_port(), "");
  node_process foreign{
      SWARM_CLI,
      {"start", "--config", config, "--node", "worker-1", "--load", SWARM_FOREIGN_PLUGIN},
      dir + "/foreign.log"};
  CHECK(foreign.wait_exit(20s) == 1);
  auto log = foreign.log();
  CHECK(log.find("node 'worker-1': cannot load user code '" +
                 std::string{SWARM_FOREIGN_PLUGIN} +
                 "': it was built against 'swarm 0.0.1; compiler another; CAF 1', this "
                 "node runs 'swarm ") != std::string::npos);
  CHECK(log.find("rebuild it against this Swarm") != std::string::npos);
  node_process missing{SWARM_CLI,
                       {"start", "--config", config, "--node", "worker-1", "--load",
                        dir + "/no-such-lib.so"},
                       dir + "/missing.log"};
  CHECK(missing.wait_exit(20s) == 1);
  CHECK(missing.log().find("cannot load user code '" + dir + "/no-such-lib.so'") !=
        std::string::npos);
}

namespace {

// Runs `swarm ARGS`; its exit code and everything it printed.
std::pair<int, std::string> swarm_cli(const std::string& args) {
  return run_command(std::string{SWARM_CLI} + " " + args);
}

// `swarm status` of `config` with `extra` arguments.
std::pair<int, std::string> swarm_status(const std::string& config,
                                         const std::string& extra) {
  return swarm_cli("status --config " + config + " " + extra);
}

} // namespace

TEST_CASE("swarm status lists the nodes of the file that never joined, and --wait N "
          "returns once N nodes are alive") {
  auto dir = make_dir();
  auto config = dir + "/cluster.toml";
  std::ofstream{config} << cluster_file(free_port(), free_port(), free_port(), "");
  auto cfg = swarm::load_cluster_config(config).value();
  swarm::application app;
  swarm::runtime rt{app, cfg, "head"};
  auto [rc, out] = swarm_status(config, "");
  CHECK(rc == 0);
  CHECK(out.find("1 node(s), 1 alive") != std::string::npos);
  CHECK(out.find("never joined") != std::string::npos);
  CHECK(out.find("worker-2") != std::string::npos);
  node_process w1{SWARM_CLI,
                  {"start", "--config", config, "--node", "worker-1"},
                  dir + "/worker-1.log"};
  std::tie(rc, out) = swarm_status(config, "--wait 2");
  CHECK(rc == 0);
  CHECK(out.find("2 node(s), 2 alive") != std::string::npos);
  CHECK(swarm_status(config, "--wait lots").first == 2);
}

TEST_CASE("swarm start --wait N says ready once N nodes are alive, and stops naming the "
          "absent nodes when they are not") {
  auto dir = make_dir();
  auto config = dir + "/cluster.toml";
  std::ofstream{config} << cluster_file(free_port(), free_port(), free_port(), "");
  // More nodes than the file lists may be waited for: others join by the head's address.
  node_process more{SWARM_CLI,
                    {"start", "--config", config, "--node", "head", "--wait", "4",
                     "--wait-timeout", "1"},
                    dir + "/more.log"};
  CHECK(more.wait_exit(20s) == 1);
  CHECK_MESSAGE(
      more.log().find("1 of the 4 node(s) waited for are alive after 1000 ms") !=
          std::string::npos,
      more.log());

  node_process alone{SWARM_CLI,
                     {"start", "--config", config, "--node", "head", "--wait", "3",
                      "--wait-timeout", "1"},
                     dir + "/alone.log"};
  CHECK(alone.wait_exit(20s) == 1);
  CHECK_MESSAGE(alone.log().find("1 of the 3 node(s) waited for are alive after 1000 ms "
                                 "(not alive: worker-1, worker-2)") != std::string::npos,
                alone.log());

  node_process head{SWARM_CLI,
                    {"start", "--config", config, "--node", "head", "--wait", "2"},
                    dir + "/head.log"};
  node_process w1{SWARM_CLI,
                  {"start", "--config", config, "--node", "worker-1"},
                  dir + "/worker-1.log"};
  auto ready = [&] {
    return head.log().find("[swarm head] ready: 2 node(s) alive (head, worker-1)") !=
           std::string::npos;
  };
  for (auto deadline = std::chrono::steady_clock::now() + 20s;
       !ready() && std::chrono::steady_clock::now() < deadline;)
    std::this_thread::sleep_for(50ms);
  CHECK_MESSAGE(ready(), head.log());
  CHECK(head.wait_exit(0ms) == -1); // and serves on
}

TEST_CASE("swarm check-config loads the file's user code as swarm start would, and names "
          "a library it cannot load") {
  auto dir = make_dir();
  auto good = dir + "/good.toml", foreign = dir + "/foreign.toml";
  auto ports = std::vector<uint16_t>{free_port(), free_port(), free_port()};
  std::ofstream{good} << cluster_file(ports[0], ports[1], ports[2],
                                      "[code]\nlibraries = [\"" +
                                          std::string{SWARM_USER_PLUGIN} + "\"]\n");
  std::ofstream{foreign} << cluster_file(ports[0], ports[1], ports[2],
                                         "[code]\nlibraries = [\"" +
                                             std::string{SWARM_FOREIGN_PLUGIN} + "\"]\n");
  swarm::application counted;
  register_code(counted);
  auto [rc, out] = swarm_cli("check-config --config " + good);
  CHECK(rc == 0);
  CHECK_MESSAGE(
      out.find("code " + std::string{SWARM_USER_PLUGIN} + ": " +
               std::to_string(counted.function_names().size()) + " function(s), " +
               std::to_string(counted.actor_type_names().size()) + " actor type(s)") !=
          std::string::npos,
      out);
  std::tie(rc, out) = swarm_cli("check-config --config " + foreign);
  CHECK(rc == 2);
  CHECK(out.find("cannot load user code '" + std::string{SWARM_FOREIGN_PLUGIN} +
                 "': it was built against") != std::string::npos);
}

TEST_CASE("a node logs with a timestamp and its name, and a status query leaves no line "
          "in its log below the debug level") {
  auto dir = make_dir();
  auto quiet = dir + "/quiet.toml", chatty = dir + "/chatty.toml";
  std::ofstream{quiet} << cluster_file(free_port(), free_port(), free_port(), "");
  std::ofstream{chatty} << cluster_file(free_port(), free_port(), free_port(),
                                        "[log]\nlevel = \"debug\"\n");
  auto serving = [](node_process& p) {
    for (auto deadline = std::chrono::steady_clock::now() + 20s;
         std::chrono::steady_clock::now() < deadline; std::this_thread::sleep_for(20ms))
      if (p.log().find("serving on") != std::string::npos) return true;
    return false;
  };
  node_process head{
      SWARM_CLI, {"start", "--config", quiet, "--node", "head"}, dir + "/quiet.log"};
  REQUIRE(serving(head));
  CHECK(swarm_status(quiet, "").first == 0);
  CHECK(swarm_status(quiet, "").first == 0);
  node_process loud{
      SWARM_CLI, {"start", "--config", chatty, "--node", "head"}, dir + "/chatty.log"};
  REQUIRE(serving(loud));
  CHECK(swarm_status(chatty, "").first == 0);
  auto churn = [&] {
    return loud.log().find("debug: closed connection with node 'swarm-client-") !=
           std::string::npos;
  };
  for (auto deadline = std::chrono::steady_clock::now() + 10s;
       !churn() && std::chrono::steady_clock::now() < deadline;)
    std::this_thread::sleep_for(20ms);
  CHECK_MESSAGE(churn(), loud.log());
  // By now the quiet head has long closed its two queries' connections.
  auto log = head.log();
  CHECK_MESSAGE(log.find("swarm-client") == std::string::npos, log);
  CHECK(std::regex_search(
      log, std::regex{R"(^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} )"
                      R"(\[swarm head\] info: serving on 127\.0\.0\.1:)"}));
}

TEST_CASE("a node serves its metrics in Prometheus' text format: tasks by function, its "
          "store and its traffic, to a scraper holding the [http] token") {
  auto dir = make_dir();
  auto config = dir + "/cluster.toml";
  auto metrics = free_port();
  // Behind a token, as a scraper configured with it reads them.
  std::string token = "scraper-7c1f0e2b9a4d";
  auto text = cluster_file(free_port(), free_port(), free_port(),
                           "[http]\ntoken = \"" + token + "\"\n");
  auto at = text.find("name = \"worker-1\"");
  text.insert(at, "metrics_port = " + std::to_string(metrics) + "\n");
  std::ofstream{config} << text;
  auto cfg = swarm::load_cluster_config(config).value();
  REQUIRE(cfg.find("worker-1").value()->metrics_port == metrics);

  swarm::application app;
  register_code(app);
  swarm::runtime rt{app, cfg, "head"};
  node_process w1{
      SWARM_CLI,
      {"start", "--config", config, "--node", "worker-1", "--load", SWARM_USER_PLUGIN},
      dir + "/worker-1.log"};
  REQUIRE_MESSAGE(rt.wait_for_nodes(2, 20s) == 2, w1.log());
  auto square = app.find_function<long(long)>("consumer.square").value();
  swarm::task_options there;
  there.node = "worker-1";
  for (long i = 0; i < 20; ++i)
    REQUIRE(rt.submit(there, square, i).get(30s).value() == i * i);
  auto summer_t = app.find_actor_type<summer>("consumer.summer").value();
  swarm::actor_options on_w1;
  on_w1.node = "worker-1";
  auto adder = rt.spawn(on_w1, summer_t, 0L);
  for (long i = 1; i <= 5; ++i)
    REQUIRE(adder.call(&summer::add, i).get(30s).value() == i * (i + 1) / 2);
  CHECK(w1.log().find("metrics on http://127.0.0.1:" + std::to_string(metrics) +
                      "/metrics") != std::string::npos);

  auto refused = http_get(metrics, "/metrics");
  CHECK_MESSAGE(refused.find("HTTP/1.1 401 Unauthorized") != std::string::npos, refused);
  CHECK(refused.find("swarm_tasks_finished_total") == std::string::npos);
  auto body = http_get(metrics, "/metrics", "Authorization: Bearer " + token + "\r\n");
  auto has = [&](const std::string& line) {
    return body.find(line) != std::string::npos;
  };
  CHECK_MESSAGE(has("HTTP/1.1 200 OK"), body);
  CHECK_MESSAGE(has("swarm_tasks_finished_total{node=\"worker-1\",function=\"consumer."
                    "square\"} 20\n"),
                body);
  CHECK(has("swarm_tasks_submitted_total{node=\"worker-1\",function=\"consumer.square\"} "
            "20\n"));
  CHECK(has(
      "swarm_tasks_failed_total{node=\"worker-1\",function=\"consumer.square\"} 0\n"));
  CHECK(has("# TYPE swarm_store_capacity_bytes gauge\n"));
  CHECK(has("swarm_nodes_alive{node=\"worker-1\"} 2\n"));
  CHECK(has("# TYPE swarm_bytes_sent_total counter\n"));
  CHECK_FALSE(has("swarm_bytes_sent_total{node=\"worker-1\",lane=\"call\"} 0\n"));
  CHECK(has("# TYPE swarm_actor_call_seconds histogram\n"));
  CHECK(has("swarm_actor_call_seconds_count{node=\"worker-1\",type=\"consumer.summer\"} "
            "5\n"));
  CHECK(has("swarm_actor_call_seconds_bucket{node=\"worker-1\",type=\"consumer.summer\","
            "le=\"+Inf\"} 5\n"));
}

TEST_CASE("swarm start serves the head's dashboard on its port + 2000, and the file's "
          "dashboard_port or --no-dashboard change that") {
  auto dir = make_dir();
  auto config = dir + "/cluster.toml";
  auto port = free_port();
  while (port > 65535 - 2000)
    port = free_port();
  std::ofstream{config} << cluster_file(port, free_port(), free_port(), "");
  // Bounded: until the head's log says `text`.
  auto wait_for = [](node_process& p, const std::string& text) {
    for (auto deadline = std::chrono::steady_clock::now() + 20s;
         p.log().find(text) == std::string::npos &&
         std::chrono::steady_clock::now() < deadline;)
      std::this_thread::sleep_for(50ms);
    return p.log().find(text) != std::string::npos;
  };
  auto head = std::make_unique<node_process>(
      SWARM_CLI, std::vector<std::string>{"start", "--config", config, "--node", "head"},
      dir + "/head.log");
  auto dashboard = std::to_string(port + 2000);
  REQUIRE_MESSAGE(wait_for(*head, "dashboard on http://127.0.0.1:" + dashboard + "/"),
                  head->log());
  auto page = http_get(static_cast<uint16_t>(port + 2000), "/");
  CHECK(page.find("HTTP/1.1 200 OK") != std::string::npos);
  CHECK(page.find("<title>Swarm dashboard</title>") != std::string::npos);
  auto status = http_get(static_cast<uint16_t>(port + 2000), "/api/status");
  CHECK_MESSAGE(status.find("\"cluster\":\"user-code\"") != std::string::npos, status);
  CHECK(status.find("\"name\":\"worker-2\"") != std::string::npos);
  CHECK(status.find("\"state\":\"never joined\"") != std::string::npos);

  head.reset();

  node_process plain{SWARM_CLI,
                     {"start", "--config", config, "--node", "head", "--no-dashboard"},
                     dir + "/plain.log"};
  REQUIRE_MESSAGE(wait_for(plain, "serving on"), plain.log());
  CHECK(plain.log().find("dashboard") == std::string::npos);
  CHECK(http_get(static_cast<uint16_t>(port + 2000), "/").empty());
}

TEST_CASE("a node whose metrics port is taken does not start, naming the port") {
  auto dir = make_dir();
  auto config = dir + "/cluster.toml";
  // Held by this test while the node starts.
  int taken = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(taken, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::listen(taken, 1) == 0);
  socklen_t len = sizeof a;
  ::getsockname(taken, reinterpret_cast<sockaddr*>(&a), &len);
  auto port = std::to_string(ntohs(a.sin_port));
  auto text = cluster_file(free_port(), free_port(), free_port(), "");
  text.insert(text.find("name = \"head\""), "metrics_port = " + port + "\n");
  std::ofstream{config} << text;
  node_process head{
      SWARM_CLI, {"start", "--config", config, "--node", "head"}, dir + "/head.log"};
  CHECK(head.wait_exit(20s) == 1);
  CHECK_MESSAGE(head.log().find(
                    "node 'head' cannot serve its metrics: cannot listen on 127.0.0.1:" +
                    port) != std::string::npos,
                head.log());
  // Likewise the head's dashboard.
  text = cluster_file(free_port(), free_port(), free_port(), "");
  text.insert(text.find("name = \"head\""), "dashboard_port = " + port + "\n");
  std::ofstream{config} << text;
  node_process again{
      SWARM_CLI, {"start", "--config", config, "--node", "head"}, dir + "/again.log"};
  CHECK(again.wait_exit(20s) == 1);
  CHECK_MESSAGE(
      again.log().find(
          "node 'head' cannot serve its dashboard: cannot listen on 127.0.0.1:" + port +
          " (is the port in use? see dashboard_port)") != std::string::npos,
      again.log());
  ::close(taken);
}
