// Fuzzes the cluster-file parser (framework/cluster_config.hpp) with the input as the
// file's text.
//
// Checked: parsing never crashes or throws; an error has a message naming the source;
// an accepted file has exactly one head, its nodes can be found by name, and each yields
// a runtime configuration.
//
// Host names are looked up with getaddrinfo, which would send the fuzzer's text to the
// system's resolver: this target replaces getaddrinfo with one that knows "localhost"
// only (a definition in the executable comes before libc's).

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "framework/cluster_config.hpp"

extern "C" int getaddrinfo(const char* node, const char*, const addrinfo*,
                           addrinfo** res) {
  if (!node || std::strcmp(node, "localhost") != 0) return EAI_NONAME;
  auto* ai = static_cast<addrinfo*>(std::calloc(1, sizeof(addrinfo)));
  auto* sa = static_cast<sockaddr_in*>(std::calloc(1, sizeof(sockaddr_in)));
  sa->sin_family = AF_INET;
  sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ai->ai_family = AF_INET;
  ai->ai_socktype = SOCK_STREAM;
  ai->ai_addrlen = sizeof(sockaddr_in);
  ai->ai_addr = reinterpret_cast<sockaddr*>(sa);
  *res = ai;
  return 0;
}

extern "C" void freeaddrinfo(addrinfo* ai) {
  while (ai) {
    auto* next = ai->ai_next;
    std::free(ai->ai_addr);
    std::free(ai);
    ai = next;
  }
}

namespace {

void check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz_cluster_config: invariant broken: %s\n", what);
  std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text{reinterpret_cast<const char*>(data), size};
  auto cfg = swarm::parse_cluster_config(text, "fuzz.toml");
  if (!cfg) {
    check(cfg.err().message.rfind("fuzz.toml", 0) == 0,
          "an error does not start with the file's name");
    return 0;
  }
  size_t heads = 0;
  for (auto& n : cfg->nodes) {
    heads += n.role == swarm::node_spec::role_type::head;
    auto found = cfg->find(n.name);
    check(found && *found == &n, "a node is not found by its name");
    check(n.port != 0, "an accepted node has no port");
    (void)cfg->runtime_for(n);
  }
  check(heads == 1, "an accepted file does not have exactly one head");
  check(cfg->head().role == swarm::node_spec::role_type::head, "head() is no head");
  check(cfg->inline_threshold <= cfg->max_message_bytes,
        "an accepted file's inline threshold exceeds its message limit");
  return 0;
}
