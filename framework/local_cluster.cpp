#include "framework/local_cluster.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <vector>

namespace swarm {

result<std::vector<uint16_t>> free_local_ports(size_t n) {
  std::vector<int> fds;
  std::vector<uint16_t> ports;
  auto close_all = [&] {
    for (int fd : fds)
      ::close(fd);
  };
  for (size_t i = 0; i < n; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      if (fd >= 0) ::close(fd);
      close_all();
      return error{errc::invalid_argument, "no free port on 127.0.0.1 for a local cluster"};
    }
    fds.push_back(fd);
    ports.push_back(ntohs(a.sin_port));
  }
  close_all();
  return ports;
}

namespace {

result<std::string> random_secret() {
  unsigned char bytes[16];
  std::unique_ptr<FILE, int (*)(FILE*)> f{std::fopen("/dev/urandom", "rb"), &std::fclose};
  if (!f || std::fread(bytes, 1, sizeof(bytes), f.get()) != sizeof(bytes))
    return error{errc::invalid_argument, "cannot read /dev/urandom for a cluster secret"};
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += hex[b >> 4];
    out += hex[b & 15];
  }
  return out;
}

} // namespace

result<cluster_config> make_local_cluster(const local_cluster_config& lc) {
  if (lc.nodes == 0)
    return error{errc::invalid_argument, "local_cluster_config::nodes must be at least 1"};
  if (lc.gcs_shards == 0 || lc.gcs_shards > 1024)
    return error{errc::invalid_argument, "local_cluster_config::gcs_shards must be 1-1024, "
                                         "got " + std::to_string(lc.gcs_shards)};
  if (lc.node_timeout <= lc.heartbeat_interval)
    return error{errc::invalid_argument, "local_cluster_config::node_timeout must be "
                                         "longer than heartbeat_interval"};
  auto ports = free_local_ports(lc.nodes);
  if (!ports) return ports.err();
  auto secret = random_secret();
  if (!secret) return secret.err();
  cluster_config cfg;
  cfg.name = "local";
  cfg.secret = *secret;
  cfg.gcs_shards = lc.gcs_shards;
  cfg.heartbeat_interval = lc.heartbeat_interval;
  cfg.node_timeout = lc.node_timeout;
  cfg.inline_threshold = lc.inline_threshold;
  for (size_t i = 0; i < lc.nodes; ++i) {
    node_spec n;
    n.name = i == 0 ? "head" : "worker-" + std::to_string(i);
    n.address = "127.0.0.1";
    n.port = (*ports)[i];
    n.role = i == 0 ? node_spec::role_type::head : node_spec::role_type::worker;
    n.cpus = lc.cpus_per_node;
    if (i > 0) n.resources = lc.worker_resources;
    cfg.nodes.push_back(std::move(n));
  }
  return cfg;
}

} // namespace swarm
