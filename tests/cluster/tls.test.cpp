// TLS between node processes: certificates from the cluster file, and a node whose
// certificate another authority signed kept out.

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "framework/tls_env.hpp"
#include "tests/cluster/process_cluster.hpp"

using namespace std::chrono_literals;
using namespace swarm::cluster_test;

namespace {

// A certificate authority and a node certificate it signed, in `dir`.
bool make_certificates(const std::string& dir, const std::string& authority) {
  auto run = [](const std::string& cmd) {
    return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0;
  };
  return run("mkdir -p " + dir) &&
         run("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
             "-days 2 -subj /CN=" +
             authority + " -keyout " + dir + "/ca.key -out " + dir + "/ca.pem") &&
         run("openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "
             "/CN=node -keyout " +
             dir + "/node.key -out " + dir + "/node.csr") &&
         run("openssl x509 -req -days 2 -in " + dir + "/node.csr -CA " + dir +
             "/ca.pem -CAkey " + dir + "/ca.key -CAcreateserial -out " + dir +
             "/node.pem");
}

} // namespace

TEST_CASE("node processes with certificates from their file run work under TLS, and a "
          "node whose certificate another authority signed cannot join") {
  if (std::system("openssl version >/dev/null 2>&1") != 0) {
    MESSAGE("skipped: no openssl tool to make certificates with");
    return;
  }
  test_dir certs;
  REQUIRE(make_certificates(certs.path + "/ours", "our-authority"));
  REQUIRE(make_certificates(certs.path + "/theirs", "their-authority"));
  auto ours = certs.path + "/ours/";
  process_cluster c{"[tls]\nmode = \"on\"\ncert = \"" + ours + "node.pem\"\nkey = \"" +
                        ours + "node.key\"\nca = \"" + ours + "ca.pem\"\n",
                    {"worker-1"}};
  REQUIRE(c.cfg.tls.certificates());
  auto nodes = c.start_alive({"head", "worker-1"});
  {
    swarm::application app;
    register_all(app);
    swarm::runtime client{app, client_of(c.cfg, "client-tls")};
    auto add = app.find_function<int(int, int)>("add").value();
    swarm::task_options on_worker;
    on_worker.node = "worker-1";
    CHECK(client.submit(on_worker, add, 2, 3).get(10s).value() == 5);
  }
  // The secret alone is not enough: its certificate is not one the cluster's authority
  // signed.
  auto theirs = certs.path + "/theirs/";
  ::setenv("SWARM_TLS", "on", 1);
  ::setenv("SWARM_TLS_CERT", (theirs + "node.pem").c_str(), 1);
  ::setenv("SWARM_TLS_KEY", (theirs + "node.key").c_str(), 1);
  ::setenv("SWARM_TLS_CA", (theirs + "ca.pem").c_str(), 1);
  auto intruder = c.join("intruder", "intruder.log");
  for (auto name : {"SWARM_TLS", "SWARM_TLS_CERT", "SWARM_TLS_KEY", "SWARM_TLS_CA"})
    ::unsetenv(name);
  CHECK(intruder->wait_exit(20s) != 0);
  CHECK(intruder->log().find("certificate verify failed") != std::string::npos);
  CHECK(nodes[0]->log().find("TLS handshake failed") != std::string::npos);
  auto st = c.status();
  REQUIRE(st);
  for (auto& n : st->nodes)
    CHECK(n.name != "intruder");
}
