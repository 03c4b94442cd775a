// A program connected to a running cluster as a client, by the head's address and the
// secret: no node of the cluster's file, its work runs on the cluster.

#include <doctest/doctest.h>

#include <csignal>
#include <numeric>
#include <string>
#include <vector>

#include "tests/cluster/three_nodes.hpp"

using namespace std::chrono_literals;
using swarm::cluster_test::eventually;
using swarm::cluster_test::three_nodes;

namespace {

swarm::client_options client_of(const three_nodes& c, const std::string& name) {
  return swarm::cluster_test::client_of(c.cfg, name);
}

// The head's row of `node`, if it has one.
std::optional<swarm::node_status> row_of(const three_nodes& c, const std::string& node) {
  auto s = swarm::cluster_status(c.cfg, 2s);
  if (!s) return std::nullopt;
  for (auto& n : s->nodes)
    if (n.name == node) return n;
  return std::nullopt;
}

uint64_t worker_store_bytes(const three_nodes& c) {
  auto s = swarm::cluster_status(c.cfg, 2s);
  REQUIRE(s);
  uint64_t out = 0;
  for (auto& n : s->nodes)
    if (!n.head) out += n.store_bytes;
  return out;
}

} // namespace

TEST_CASE("a program connected by the head's address and the secret runs its tasks, "
          "actors and objects on the cluster, not on itself") {
  three_nodes c;
  swarm::runtime client{c.app, client_of(c, "client-a")};
  CHECK_FALSE(client.cluster()->find("client-a").value()->port);
  auto where = c.app.find_function<std::string()>("node_name").value();
  std::set<std::string> ran_on;
  std::vector<swarm::object_ref<std::string>> refs;
  for (int i = 0; i < 8; ++i)
    refs.push_back(client.submit(where));
  for (auto& r : refs)
    ran_on.insert(r.get(20s).value());
  CHECK_FALSE(ran_on.count("client-a"));
  // An actor lives on the cluster; calls reach it from the client.
  auto cls = c.app.find_actor_type<swarm::cluster_test::counter>("counter").value();
  auto a = client.spawn(cls, 5);
  CHECK(a.call(&swarm::cluster_test::counter::add, 2).get(20s).value() == 7);
  CHECK(a.call(&swarm::cluster_test::counter::node).get(20s).value() != "client-a");
  // A large object put here is pulled by the task on the node that reads it.
  std::vector<uint8_t> big(1 << 20);
  std::iota(big.begin(), big.end(), uint8_t{0});
  auto put = client.put(big);
  auto read =
      c.app.find_function<std::vector<int64_t>(const std::vector<uint8_t>&)>("read_blob")
          .value();
  swarm::task_options on_worker;
  on_worker.node = "worker-1";
  auto got = client.submit(on_worker, read, put).get(20s).value();
  CHECK(got[0] == c.w1->pid());
  CHECK(got[1] == std::accumulate(big.begin(), big.end(), int64_t{0}));
  // The head lists the client, as such.
  auto row = row_of(c, "client-a");
  REQUIRE(row);
  CHECK(row->client);
  CHECK(row->alive);
  // It is no node of the cluster: the nodes' counts leave it out.
  CHECK(swarm::cluster_status(c.cfg, 2s).value().alive() == 3);
  CHECK(c.rt->wait_for_nodes(4, std::chrono::milliseconds(0)) == 3);
}

TEST_CASE("a client with the wrong secret, or no head at the address, is refused with "
          "an error naming the address") {
  three_nodes c;
  auto o = client_of(c, "client-b");
  o.secret = "not the secret";
  o.timeout = 2s;
  auto where = o.address + ":" + std::to_string(o.port);
  try {
    swarm::runtime bad{c.app, o};
    FAIL("a client without the secret joined");
  } catch (const swarm::failure& e) {
    CHECK(std::string{e.what()}.find(where) != std::string::npos);
  }
  auto nobody = client_of(c, "client-c");
  nobody.port = c.cfg.head().port + 7; // nothing listens there
  nobody.timeout = 2s;
  CHECK_THROWS_AS(swarm::runtime(c.app, nobody), swarm::failure);
  CHECK_FALSE(row_of(c, "client-b"));
}

TEST_CASE("a client whose function clashes with the cluster's signature is refused at "
          "once with the head's reason, not a timeout") {
  three_nodes c;
  swarm::application other;
  other.function("add", [](int a, int b, int) { return a + b; }); // add: 3 arguments
  auto o = client_of(c, "client-clash");
  o.timeout = 20s;
  auto t0 = std::chrono::steady_clock::now();
  try {
    swarm::runtime clash{other, o};
    FAIL("a client with a clashing signature joined");
  } catch (const swarm::failure& e) {
    std::string why = e.what();
    INFO(why);
    CHECK(why.find("function 'add'") != std::string::npos);
    CHECK(why.find("sent no node table") == std::string::npos);
  }
  CHECK(std::chrono::steady_clock::now() - t0 < 10s);
}

TEST_CASE("a client killed by a signal leaves no job row running") {
  three_nodes c;
  auto head = c.cfg.head();
  ::setenv("SWARM_ADDRESS", (head.address + ":" + std::to_string(head.port)).c_str(), 1);
  ::setenv("SWARM_SECRET", c.cfg.secret.c_str(), 1);
  swarm::cluster_test::node_process client{SWARM_TEST_NODE, {"--client-idle"},
                                           c.dir + "/client-idle.log"};
  ::unsetenv("SWARM_ADDRESS");
  ::unsetenv("SWARM_SECRET");
  auto pid = static_cast<uint32_t>(client.pid());
  auto row = [&]() -> std::optional<swarm::job_status> {
    auto s = swarm::cluster_status(c.cfg, 2s);
    if (!s) return std::nullopt;
    for (auto& j : s->jobs)
      if (j.pid == pid) return j;
    return std::nullopt;
  };
  REQUIRE(eventually(20s, [&] { return row() && row()->running; }));
  client.kill_now();
  // Bounded: the head finds it dead after node_timeout, and drops it the tick after.
  CHECK(eventually(20s, [&] { return row() && !row()->running; }));
  CHECK(row()->ended_ms >= row()->started_ms);
}

TEST_CASE("a client that disconnects leaves no object of its own on the cluster, and "
          "leaves the node table") {
  three_nodes c;
  auto before = worker_store_bytes(c);
  // Held past the client's end: it leaves without freeing them one by one, as a client
  // that crashes would.
  std::vector<swarm::object_ref<std::vector<uint8_t>>> kept;
  {
    swarm::runtime client{c.app, client_of(c, "client-d")};
    auto blob = c.app.find_function<std::vector<uint8_t>(int)>("blob").value();
    swarm::task_options slot;
    slot.resources.set("slot", 1); // on the workers
    for (int i = 0; i < 6; ++i)
      kept.push_back(client.submit(slot, blob, 1 << 20));
    for (auto& k : kept)
      REQUIRE(k.get(20s));
    // Results stay on the workers that made them, owned by the client.
    REQUIRE(
        eventually(10s, [&] { return worker_store_bytes(c) >= before + (6u << 20); }));
  }
  // Gone with the client: its rows, and the values held for it.
  CHECK(eventually(20s, [&] { return !row_of(c, "client-d"); }));
  CHECK(eventually(20s, [&] { return worker_store_bytes(c) < before + (1u << 20); }));
}

TEST_CASE("swarm job submit runs a program on the head, which connects as a client, its "
          "output and how it ended are kept, and a job can be stopped") {
  // Jobs are on: the file has a [jobs] token, which c.cfg carries.
  three_nodes c{"[jobs]\ntoken = \"job-token-4f0d9b2c71e8\"\n"};
  // The cluster's secret alone runs nothing.
  auto secret_only = c.cfg;
  secret_only.jobs.token.clear();
  auto refused = swarm::submit_job(secret_only, {"/bin/true"}, "", 10s);
  REQUIRE_FALSE(refused);
  CHECK(refused.err().message.find("no job token was given") != std::string::npos);
  CHECK_FALSE(swarm::list_jobs(secret_only, 0, 5s));
  // A program that connects from its environment and runs tasks on the cluster.
  auto job = swarm::submit_job(c.cfg, {SWARM_TEST_NODE, "--client-job"}, "", 10s);
  REQUIRE_MESSAGE(job, job.err().message);
  auto ended = [&](uint64_t id) {
    auto s = swarm::list_jobs(c.cfg, id, 5s);
    return s && s->size() == 1 && (*s)[0].state != "running";
  };
  REQUIRE(eventually(30s, [&] { return ended(job->id); }));
  auto out = swarm::job_output_from(c.cfg, job->id, 0, 5s).value();
  CHECK(out.job.state == "succeeded");
  CHECK(out.job.exit_code == 0);
  CHECK(out.text.find("client job: 10 tasks on the cluster, sum 110") !=
        std::string::npos);
  // One that fails keeps its exit code; one that cannot start is refused, naming it.
  auto fails =
      swarm::submit_job(c.cfg, {"/bin/sh", "-c", "echo to stderr >&2; exit 3"}, "", 10s);
  REQUIRE(fails);
  REQUIRE(eventually(10s, [&] { return ended(fails->id); }));
  auto failed = swarm::job_output_from(c.cfg, fails->id, 0, 5s).value();
  CHECK(failed.job.state == "failed");
  CHECK(failed.job.exit_code == 3);
  CHECK(failed.text == "to stderr\n");
  auto missing = swarm::submit_job(c.cfg, {"/no/such/program"}, "", 10s);
  REQUIRE_FALSE(missing);
  CHECK(missing.err().message.find("/no/such/program") != std::string::npos);
  // A long one is stopped: SIGTERM to its process group.
  auto sleeper =
      swarm::submit_job(c.cfg, {"/bin/sh", "-c", "echo started; sleep 60"}, "", 10s);
  REQUIRE(sleeper);
  REQUIRE(eventually(10s, [&] {
    auto o = swarm::job_output_from(c.cfg, sleeper->id, 0, 5s);
    return o && o->text == "started\n";
  }));
  REQUIRE(swarm::stop_job(c.cfg, sleeper->id, 5s));
  REQUIRE(eventually(10s, [&] { return ended(sleeper->id); }));
  auto stopped = swarm::list_jobs(c.cfg, sleeper->id, 5s).value();
  CHECK(stopped[0].state == "stopped");
  CHECK(stopped[0].exit_code == -SIGTERM);
  // The command line lists them all, and names a job that does not exist.
  auto [rc, listed] = swarm::cluster_test::run_command(
      std::string{SWARM_CLI} + " job status --config " + c.config);
  CHECK(rc == 0);
  // A file without the token works with SWARM_JOB_TOKEN, and not without.
  auto tokenless = c.dir + "/tokenless.toml";
  swarm::cluster_test::write(
      tokenless, swarm::cluster_test::cluster_file(c.cfg.head().port, c.cfg.nodes[1].port,
                                                   c.cfg.nodes[2].port, c.cfg.secret));
  auto [rc_env, with_env] = swarm::cluster_test::run_command(
      "SWARM_JOB_TOKEN=job-token-4f0d9b2c71e8 " + std::string{SWARM_CLI} +
      " job status --config " + tokenless);
  CHECK(rc_env == 0);
  CHECK(with_env.find("stopped") != std::string::npos);
  auto [rc_bare, bare] = swarm::cluster_test::run_command(
      std::string{SWARM_CLI} + " job status --config " + tokenless + " 2>&1");
  CHECK(rc_bare != 0);
  CHECK_MESSAGE(
      bare.find("need the [jobs] token of the head's file (or SWARM_JOB_TOKEN)") !=
          std::string::npos,
      bare);
  CHECK(listed.find("succeeded") != std::string::npos);
  CHECK(listed.find("stopped") != std::string::npos);
  auto [rc_logs, logs] =
      swarm::cluster_test::run_command(std::string{SWARM_CLI} + " job logs --config " +
                                       c.config + " " + std::to_string(job->id));
  CHECK(rc_logs == 0);
  CHECK(logs.find("sum 110") != std::string::npos);
  auto [rc_none, none] = swarm::cluster_test::run_command(
      std::string{SWARM_CLI} + " job stop --config " + c.config + " 99 2>&1");
  CHECK(rc_none != 0);
  CHECK(none.find("no job 99") != std::string::npos);
}
