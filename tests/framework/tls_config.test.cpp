#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "framework/cluster_config.hpp"
#include "framework/tls_env.hpp"

namespace {

using mode = swarm::wire_msg::tls_options::mode;

std::string file_with(const std::string& tls) {
  return "[cluster]\nsecret = \"0123456789abcdef\"\n\n" + tls +
         "\n[[node]]\nname = \"head\"\naddress = \"127.0.0.1\"\nport = 7100\nrole = "
         "\"head\"\n";
}

std::string error_of(const std::string& text) {
  auto r = swarm::parse_cluster_config(text, "cluster.toml");
  REQUIRE_FALSE(r);
  return r.err().message;
}

} // namespace

TEST_CASE("TLS covers the connections that leave the host unless [tls] mode says "
          "otherwise") {
  auto none = swarm::parse_cluster_config(file_with(""), "cluster.toml").value();
  CHECK(none.tls.use == mode::automatic);
  CHECK_FALSE(none.tls.certificates());
  for (auto [text, want] : {std::pair{"on", mode::on}, std::pair{"off", mode::off},
                            std::pair{"auto", mode::automatic}}) {
    auto cfg =
        swarm::parse_cluster_config(
            file_with("[tls]\nmode = \"" + std::string{text} + "\"\n"), "cluster.toml")
            .value();
    CHECK(cfg.tls.use == want);
  }
  auto bad = error_of(file_with("[tls]\nmode = \"yes\"\n"));
  CHECK(bad.find("tls.mode") != std::string::npos);
  CHECK(bad.find("'yes'") != std::string::npos);
  CHECK(error_of(file_with("[tls]\nciphers = \"x\"\n")).find("tls.ciphers") !=
        std::string::npos);
}

TEST_CASE(
    "[tls] takes cert, key and ca together or none of them, and not with mode off") {
  auto all = swarm::parse_cluster_config(
                 file_with("[tls]\ncert = \"n.pem\"\nkey = \"n.key\"\nca = \"ca.pem\"\n"),
                 "cluster.toml")
                 .value();
  CHECK(all.tls.certificates());
  CHECK(all.tls.ca == "ca.pem");
  auto partial = error_of(file_with("[tls]\ncert = \"n.pem\"\nkey = \"n.key\"\n"));
  CHECK(partial.find("needs cert, key and ca together") != std::string::npos);
  auto unused = error_of(file_with(
      "[tls]\nmode = \"off\"\ncert = \"n.pem\"\nkey = \"n.key\"\nca = \"c.pem\"\n"));
  CHECK(unused.find("would go unused") != std::string::npos);
}

TEST_CASE("certificate paths in a cluster file are found from the file's folder") {
  auto dir = std::filesystem::temp_directory_path() / "swarm-tls-config-test";
  std::filesystem::create_directories(dir);
  auto path = (dir / "cluster.toml").string();
  {
    std::ofstream out{path};
    out << file_with(
        "[tls]\ncert = \"tls/n.pem\"\nkey = \"/etc/n.key\"\nca = \"ca.pem\"\n");
  }
  auto cfg = swarm::load_cluster_config(path).value();
  CHECK(cfg.tls.cert == (dir / "tls/n.pem").string());
  CHECK(cfg.tls.key == "/etc/n.key");
  CHECK(cfg.tls.ca == (dir / "ca.pem").string());
  std::filesystem::remove_all(dir);
}

TEST_CASE("a process the cluster started takes its TLS settings from SWARM_TLS and its "
          "peers, and the environment it is given carries them") {
  swarm::wire_msg::tls_options given;
  given.use = mode::on;
  given.cert = "/c.pem";
  given.key = "/k.pem";
  given.ca = "/ca.pem";
  auto env = swarm::tls_env(given);
  REQUIRE(env.size() == 4);
  for (auto& kv : env) {
    auto eq = kv.find('=');
    ::setenv(kv.substr(0, eq).c_str(), kv.substr(eq + 1).c_str(), 1);
  }
  auto got = swarm::tls_from_env().value();
  CHECK(got.use == mode::on);
  CHECK(got.cert == "/c.pem");
  CHECK(got.key == "/k.pem");
  CHECK(got.ca == "/ca.pem");
  ::setenv("SWARM_TLS", "maybe", 1);
  auto bad = swarm::tls_from_env();
  REQUIRE_FALSE(bad);
  CHECK(bad.err().message.find("SWARM_TLS must be auto, on or off") != std::string::npos);
  for (auto name : {"SWARM_TLS", "SWARM_TLS_CERT", "SWARM_TLS_KEY", "SWARM_TLS_CA"})
    ::unsetenv(name);
  CHECK(swarm::tls_from_env().value().use == mode::automatic);
}
