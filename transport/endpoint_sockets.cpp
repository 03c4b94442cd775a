#include "transport/endpoint_sockets.hpp"

#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace swarm::wire_msg::endpoint_sockets {

std::string sys_error(const char* what) {
  return std::string{what} + ": " + std::strerror(errno);
}

void tune(int fd, std::chrono::milliseconds unacked) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (unacked.count() <= 0) return;
  auto ms = static_cast<unsigned int>(unacked.count());
  ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof(ms));
}

void unbound_unacked(int fd) {
  unsigned int system_default = 0;
  ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &system_default,
               sizeof(system_default));
}

std::string peer_address(const sockaddr_in& a) {
  char buf[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &a.sin_addr, buf, sizeof(buf));
  return std::string{buf} + ":" + std::to_string(ntohs(a.sin_port));
}

std::string local_address(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof(a);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) return "";
  return peer_address(a);
}

result<sockaddr_in> make_address(const std::string& host, uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  if (::inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1)
    return error{errc::invalid_argument,
                 "'" + host +
                     "' is not an IPv4 address (use dotted form, e.g. 127.0.0.1)"};
  return a;
}

ssize_t send_from(int fd, const frame_parts& f, size_t off) {
  iovec iov[3];
  int n = 0;
  auto add = [&](const uint8_t* p, size_t len) {
    if (off >= len) {
      off -= len;
      return;
    }
    iov[n++] = {const_cast<uint8_t*>(p + off), len - off};
    off = 0;
  };
  static constexpr uint8_t zeros[8] = {};
  add(f.bytes.data(), f.bytes.size());
  add(f.tail, f.tail_size);
  add(zeros, f.pad);
  msghdr m{};
  m.msg_iov = iov;
  m.msg_iovlen = static_cast<size_t>(n);
  return ::sendmsg(fd, &m, MSG_NOSIGNAL);
}

result<std::pair<int, bool>> start_connect(const std::string& address, uint16_t port) {
  auto addr = make_address(address, port);
  if (!addr) return addr.err();
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return error{errc::node_unreachable, sys_error("socket")};
  if (::connect(fd, reinterpret_cast<sockaddr*>(&*addr), sizeof(*addr)) == 0)
    return std::pair{fd, true};
  if (errno == EINPROGRESS) return std::pair{fd, false};
  auto why =
      sys_error(("cannot connect to " + address + ":" + std::to_string(port)).c_str());
  ::close(fd);
  return error{errc::node_unreachable, why};
}

std::string host_of(const std::string& remote) {
  return remote.substr(0, remote.rfind(':'));
}

uint16_t port_of(const std::string& remote) {
  return static_cast<uint16_t>(std::stoul(remote.substr(remote.rfind(':') + 1)));
}

bool silent(int fd, int64_t last_received, int64_t opened) {
  if (last_received != opened) return false;
  int waiting = 0;
  return ::ioctl(fd, FIONREAD, &waiting) != 0 || waiting == 0;
}

} // namespace swarm::wire_msg::endpoint_sockets
