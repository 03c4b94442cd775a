// A node's HTTP endpoint over real loopback sockets: slow clients, the token, methods.

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "actors/observability/http_server.hpp"

using namespace std::chrono_literals;
using swarm::actors::http_server;

namespace {

// A connection to 127.0.0.1:`port` whose reads give up after `wait`; -1 if none.
int dial(uint16_t port, std::chrono::seconds wait) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  timeval tv{static_cast<time_t>(wait.count()), 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Everything `fd` receives until the peer closes it or a read times out.
std::string drain(int fd) {
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;)
    out.append(buf, static_cast<size_t>(n));
  return out;
}

// Sends `request` whole and returns the answer (empty when none came within 10 s).
std::string ask(uint16_t port, const std::string& request) {
  int fd = dial(port, 10s);
  if (fd < 0) return "";
  std::string out;
  if (::send(fd, request.data(), request.size(), 0) ==
      static_cast<ssize_t>(request.size()))
    out = drain(fd);
  ::close(fd);
  return out;
}

std::string get(const std::string& path, const std::string& headers = "") {
  return "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers + "\r\n";
}

} // namespace

TEST_CASE("a client that never finishes its request holds an HTTP thread no longer than "
          "the request timeout, and the others are answered meanwhile") {
  swarm::http_config cfg;
  cfg.threads = 2;
  cfg.request_timeout = 300ms;
  auto server = http_server::start("127.0.0.1", 0, cfg,
                                   {{"/x",
                                     [] {
                                       return http_server::reply{"text/plain", "hello"};
                                     }}})
                    .value();
  // Three times as many half-sent requests as threads, each left hanging.
  std::vector<int> slow;
  for (int i = 0; i < 6; ++i) {
    int fd = dial(server->port(), 5s);
    REQUIRE(fd >= 0);
    std::string part = "GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    REQUIRE(::send(fd, part.data(), part.size(), 0) == static_cast<ssize_t>(part.size()));
    slow.push_back(fd);
  }
  // Without a request timeout the two threads would wait for them for good (civetweb's
  // default: 30 s each), and this read gives up after 10 s.
  auto answer = ask(server->port(), get("/x"));
  CHECK_MESSAGE(answer.find("HTTP/1.1 200 OK") != std::string::npos, answer);
  CHECK(answer.find("\r\n\r\nhello") != std::string::npos);
  // Each slow one was closed, with nothing served (a read of 0 bytes, or an error page).
  for (int fd : slow) {
    auto got = drain(fd);
    CHECK(got.find("hello") == std::string::npos);
    char c;
    CHECK(::recv(fd, &c, 1, 0) == 0);
    ::close(fd);
  }
}

TEST_CASE(
    "with a token, an HTTP endpoint answers only requests that carry it, except its "
    "open pages, and only GET") {
  swarm::http_config cfg;
  cfg.token = "tok-0123456789abcdef";
  auto server =
      http_server::start("127.0.0.1", 0, cfg,
                         {{"/data",
                           [] {
                             return http_server::reply{"application/json", "{\"n\":1}"};
                           }},
                          {"/page",
                           [] {
                             return http_server::reply{"text/html", "<p>page</p>"};
                           },
                           true}})
          .value();
  auto none = ask(server->port(), get("/data"));
  CHECK_MESSAGE(none.find("HTTP/1.1 401 Unauthorized") != std::string::npos, none);
  CHECK(none.find("WWW-Authenticate: Bearer") != std::string::npos);
  CHECK(none.find("[http] token") != std::string::npos);
  CHECK(none.find("{\"n\":1}") == std::string::npos);
  auto wrong =
      ask(server->port(), get("/data", "Authorization: Bearer tok-0123456789abcdeX\r\n"));
  CHECK(wrong.find("HTTP/1.1 401 Unauthorized") != std::string::npos);
  auto basic = ask(server->port(), get("/data", "Authorization: Basic dG9rZW4=\r\n"));
  CHECK(basic.find("HTTP/1.1 401 Unauthorized") != std::string::npos);
  auto right =
      ask(server->port(), get("/data", "Authorization: Bearer " + cfg.token + "\r\n"));
  CHECK_MESSAGE(right.find("HTTP/1.1 200 OK") != std::string::npos, right);
  CHECK(right.find("Content-Type: application/json") != std::string::npos);
  CHECK(right.find("\r\n\r\n{\"n\":1}") != std::string::npos);
  auto page = ask(server->port(), get("/page"));
  CHECK(page.find("HTTP/1.1 200 OK") != std::string::npos);
  CHECK(page.find("<p>page</p>") != std::string::npos);
  auto post = ask(server->port(),
                  "POST /data HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " +
                      cfg.token + "\r\nContent-Length: 0\r\n\r\n");
  CHECK_MESSAGE(post.find("HTTP/1.1 405 Method Not Allowed") != std::string::npos, post);
}

TEST_CASE("an HTTP endpoint's answers may use a thread's whole stack, and one that "
          "throws is answered with 500 saying why") {
  // civetweb's own threads have 100 KiB of stack as Debian builds it: this answer, which
  // uses 1 MiB of it, overflowed there and took the process down.
  auto deep = [] {
    constexpr size_t size = 1 << 20, page = 4096;
    volatile char scratch[size];
    // A page at a time from the top, as a deep call would: past the stack's end lies
    // its guard page.
    int pages = 0;
    for (size_t end = size; end >= page; end -= page) {
      scratch[end - 1] = 1;
      pages += scratch[end - 1];
    }
    return http_server::reply{"text/plain", "deep " + std::to_string(pages)};
  };
  auto server =
      http_server::start(
          "127.0.0.1", 0, {},
          {{"/deep", deep},
           {"/broken",
            []() -> http_server::reply { throw std::runtime_error("no rows today"); }}})
          .value();
  auto answer = ask(server->port(), get("/deep"));
  CHECK_MESSAGE(answer.find("HTTP/1.1 200 OK") != std::string::npos, answer);
  CHECK(answer.find("\r\n\r\ndeep 256") != std::string::npos);
  auto broken = ask(server->port(), get("/broken"));
  CHECK_MESSAGE(broken.find("HTTP/1.1 500 Internal Server Error") != std::string::npos,
                broken);
  CHECK(broken.find("the answer to /broken failed: no rows today") != std::string::npos);
}

TEST_CASE("an HTTP endpoint whose port is taken says where it could not listen") {
  auto first = http_server::start("127.0.0.1", 0, {}, {}).value();
  auto second = http_server::start("127.0.0.1", first->port(), {}, {});
  REQUIRE_FALSE(second);
  CHECK(second.err().message ==
        "cannot listen on 127.0.0.1:" + std::to_string(first->port()));
}
