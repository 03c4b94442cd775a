// TLS between node processes: certificates from the cluster file, and a node whose
// certificate another authority signed kept out.

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <tuple>

#include "framework/tls_env.hpp"
#include "tests/cluster/process_cluster.hpp"
#include "tests/transport/test_certificates.hpp"

using namespace std::chrono_literals;
using namespace swarm::cluster_test;
using swarm::test::have_openssl_tool;
using swarm::test::make_certificates;

namespace {

// Certificates of two authorities in a fresh folder: ours (the cluster's) and theirs.
struct two_authorities {
  two_authorities() {
    REQUIRE(make_certificates(ours, "our-authority"));
    REQUIRE(make_certificates(theirs, "their-authority"));
  }

  // A [tls] table, mode "on", of our certificate and authority, with `key`.
  std::string tls_table(const std::string& key) const {
    return "[tls]\nmode = \"on\"\ncert = \"" + ours + "node.pem\"\nkey = \"" + key +
           "\"\nca = \"" + ours + "ca.pem\"\n";
  }

  test_dir dir;
  std::string ours = dir.path + "/ours/";
  std::string theirs = dir.path + "/theirs/";
};

} // namespace

TEST_CASE("node processes with certificates from their file run work under TLS, and a "
          "node whose certificate another authority signed cannot join") {
  if (!have_openssl_tool()) {
    MESSAGE("skipped: no openssl tool to make certificates with");
    return;
  }
  two_authorities certs;
  process_cluster c{certs.tls_table(certs.ours + "node.key"), {"worker-1"}};
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
  auto& theirs = certs.theirs;
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

TEST_CASE("swarm check-config loads the [tls] files as a node would, and names a key "
          "that is not its certificate's") {
  if (!have_openssl_tool()) {
    MESSAGE("skipped: no openssl tool to make certificates with");
    return;
  }
  two_authorities certs;
  auto file = [&](const std::string& key) {
    process_cluster c{certs.tls_table(key), {}};
    return run_command(std::string{SWARM_CLI} + " check-config --config " + c.config);
  };
  auto [rc, out] = file(certs.ours + "node.key");
  CHECK_MESSAGE(out.find("tls: on, certificate " + certs.ours + "node.pem (loaded)") !=
                    std::string::npos,
                out);
  auto mismatched = certs.theirs + "node.key";
  std::tie(rc, out) = file(mismatched);
  CHECK(rc == 2);
  CHECK_MESSAGE(out.find("[tls] key '" + mismatched + "'") != std::string::npos, out);
}
