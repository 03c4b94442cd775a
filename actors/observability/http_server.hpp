#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "framework/runtime_config.hpp"

struct mg_context;
struct mg_connection;

namespace swarm::actors {

/// One HTTP endpoint of a node (civetweb underneath): GET requests to a few fixed paths.
/// It cannot be starved by slow or silent clients: each request has
/// `http_config::request_timeout` to arrive and be answered, and `threads` serve side by
/// side. With a token, a request without `Authorization: Bearer <token>` gets 401.
class http_server {
public:
  /// What a path answers: its content type and body.
  struct reply {
    std::string type;
    std::string body;
  };

  struct route {
    std::string path; ///< matched exactly, e.g. "/metrics"
    /// Makes the answer; runs on a thread of the default stack size made for the
    /// request, several at once. An exception it throws is answered with 500, saying
    /// what it was.
    std::function<reply()> answer;
    /// Served without the token (a page that holds no data).
    bool open = false;
  };

  /// Serves `routes` on `address`:`port` (0: a free port); an error says where it could
  /// not listen.
  static result<std::unique_ptr<http_server>> start(const std::string& address,
                                                    uint16_t port, const http_config& cfg,
                                                    std::vector<route> routes);
  ~http_server();

  http_server(const http_server&) = delete;
  http_server& operator=(const http_server&) = delete;

  /// The port it listens on.
  uint16_t port() const noexcept { return port_; }

private:
  http_server(std::string token, std::vector<route> routes)
      : token_(std::move(token)), routes_(std::move(routes)) {}

  // What one registered path's handler gets: the server and its route.
  struct binding {
    const http_server* server;
    const route* served;
  };

  static int on_request(mg_connection* conn, void* bound);
  bool authorized(mg_connection* conn) const;

  std::string token_;
  std::vector<route> routes_;
  std::vector<binding> bindings_;
  mg_context* ctx_ = nullptr;
  uint16_t port_ = 0;
};

} // namespace swarm::actors
