// Partitions on a real link: the head (this process) and worker-2 in one network
// namespace, worker-1 in another, joined by a veth pair (tools/netns_link.hpp). A cut
// takes worker-1's end of the link down (both ways) or drops what one side sends (a
// blackhole route), while every process runs on. Skipped without root and the tools.

#include <doctest/doctest.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/cluster/process_cluster.hpp"
#include "tests/cluster/test_app.hpp"
#include "tools/netns_link.hpp"

using namespace std::chrono_literals;
using namespace swarm::cluster_test;
using swarm::tools::netns_link;

namespace {

struct split_cluster {
  explicit split_cluster(const netns_link& link) : bed{link}, here{link, 0} {
    auto node = [](const std::string& name, int ns, int port, const char* more) {
      return "[[node]]\nname = \"" + name + "\"\naddress = \"" + netns_link::address(ns) +
             "\"\nport = " + std::to_string(port) + "\ncpus = 1\n" + more;
    };
    std::ofstream{config} << "[cluster]\nname = \"split\"\n"
                             "secret = \"the-secret-of-the-partition-tests\"\n"
                             "heartbeat_ms = 100\nnode_timeout_ms = 1000\n" +
                                 node("head", 0, 7300, "role = \"head\"\n") +
                                 node("worker-1", 1, 7300, "") +
                                 node("worker-2", 0, 7301, "");
    cfg = swarm::load_cluster_config(config).value();
    register_all(app);
    head = std::make_unique<swarm::runtime>(app, cfg, "head");
    w2 = start("worker-2");
    {
      netns_link::inside b{link, 1};
      w1 = start("worker-1");
    }
    bool up = eventually(20s, [&] { return alive() == 3; });
    if (!up) MESSAGE("worker-1: " << w1->log() << "\nworker-2: " << w2->log());
    REQUIRE(up);
  }

  ~split_cluster() {
    w1.reset();
    w2.reset();
    head.reset();
  }

  std::unique_ptr<node_process> start(const std::string& name) {
    return std::make_unique<node_process>(
        SWARM_TEST_NODE, std::vector<std::string>{"--config", config, "--node", name},
        dir.path + "/" + name + ".log");
  }

  size_t alive() {
    auto s = swarm::cluster_status(cfg, 2s);
    return s ? s->alive() : 0;
  }

  // Runs `ip ARGS` inside worker-1's namespace (`ns` 1) or the head's (0).
  void ip(int ns, const std::string& args) {
    auto [rc, out] = run_command("ip -n " + bed.ns(ns) + " " + args);
    REQUIRE_MESSAGE(rc == 0, "ip " << args << ": " << out);
  }

  const netns_link& bed;
  netns_link::inside here; // the head's namespace while the cluster lives
  test_dir dir;
  std::string config = dir.path + "/cluster.toml";
  swarm::cluster_config cfg;
  swarm::application app;
  std::unique_ptr<swarm::runtime> head;
  std::unique_ptr<node_process> w1, w2;
};

// One way of cutting worker-1 off, and of healing it.
struct cut {
  const char* what;
  int ns;
  const char* on;
  const char* off;
};

} // namespace

TEST_CASE(
    "named actors of a worker cut off on a real link restart elsewhere, and once the "
    "link heals it stops its stale instances: the creator's handles and lookups by "
    "name on another node reach the one live instance") {
  if (auto why = netns_link::unavailable(); !why.empty()) {
    MESSAGE("skipped: " << why);
    return;
  }
  // Worker-1's end of the link down; or what one side sends to the other dropped
  // (blackholed in its namespace), what the other sends still arriving.
  std::vector<cut> cuts{
      {"both ways", 1, "link set veth1 down", "link set veth1 up"},
      {"worker-1's messages lost", 1, "route add blackhole 10.77.0.1/32",
       "route del blackhole 10.77.0.1/32"},
      {"messages to worker-1 lost", 0, "route add blackhole 10.77.0.2/32",
       "route del blackhole 10.77.0.2/32"},
  };
  for (auto& how : cuts) {
    CAPTURE(how.what);
    netns_link link{"1gbit", netns_link::queueing::fifo};
    split_cluster c{link};
    auto counter_t = c.app.find_actor_type<counter>("counter").value();
    swarm::actor_options o;
    o.node = "worker-1";
    o.move_if_node_lost = true;
    o.max_restarts = 2;
    o.max_task_retries = 2;
    o.checkpoint_every = 1;
    std::vector<swarm::actor_handle<counter>> accounts;
    for (int i = 0; i < 3; ++i) {
      o.name = "account-" + std::to_string(i);
      accounts.push_back(c.head->spawn(o, counter_t, 100 * i));
      REQUIRE(accounts.back().call(&counter::add, 1).get(10s).value() == 100 * i + 1);
    }
    // By name, from a task on worker-2: a lookup there and a call through it.
    auto call_named =
        c.app.find_function<int(const std::string&, int)>("call_named").value();
    swarm::task_options on_2;
    on_2.node = "worker-2";
    auto by_name = [&](int x) {
      return c.head->submit(on_2, call_named, std::string{"account-0"}, x).get(20s);
    };
    REQUIRE(by_name(10).value() == 11);

    c.ip(how.ns, how.on);
    // The cut lasts 4 x node_timeout, well past the head's verdict.
    auto heal_at = std::chrono::steady_clock::now() + 4s;
    bool lost = eventually(15s, [&] { return c.alive() == 2; });
    REQUIRE_MESSAGE(lost, "the head did not find worker-1 dead");
    for (int i = 0; i < 3; ++i) {
      auto& a = accounts[static_cast<size_t>(i)];
      CHECK(a.call(&counter::add, 1).get(20s).value() == 100 * i + (i == 0 ? 12 : 2));
      CHECK(a.call(&counter::node).get(10s).value() != "worker-1");
    }
    CHECK(by_name(10).value() == 22);

    std::this_thread::sleep_until(heal_at);
    c.ip(how.ns, how.off);
    bool back = eventually(30s, [&] { return c.alive() == 3; });
    INFO("worker-1: " << c.w1->log());
    REQUIRE(back);
    // Worker-1 ran on through the cut, its three instances with it: it stops them before
    // it serves calls again.
    CHECK(eventually(10s, [&] {
      return c.w1->log().find("stopped 3 actor(s) it hosted for other nodes") !=
             std::string::npos;
    }));
    for (int i = 0; i < 3; ++i) {
      auto name = "account-" + std::to_string(i);
      auto again = c.head->find_actor(counter_t, name).value();
      CHECK(again.call(&counter::add, 1).get(10s).value() == 100 * i + (i == 0 ? 23 : 3));
      CHECK(again.call(&counter::node).get(10s).value() != "worker-1");
    }
    CHECK(accounts[0].call(&counter::add, 1).get(10s).value() == 24);
    CHECK(by_name(10).value() == 34);
  }
}
