#pragma once

// Certificates for the TLS tests, made with the `openssl` tool: an authority and a node
// certificate it signed.

#include <cstdlib>
#include <filesystem>
#include <string>

namespace swarm::test {

/// Whether the `openssl` tool is here to make certificates with.
inline bool have_openssl_tool() {
  return std::system("openssl version >/dev/null 2>&1") == 0;
}

/// An authority named `authority` (ca.pem, ca.key) and a node certificate it signed
/// (node.pem, node.key) in `dir`, made if missing; false when a step failed.
inline bool make_certificates(const std::string& dir, const std::string& authority) {
  auto run = [](const std::string& cmd) {
    return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0;
  };
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  return !ec &&
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

} // namespace swarm::test
