#include "actors/observability/http_server.hpp"

#include <civetweb.h>

#include <cstring>
#include <exception>
#include <string_view>
#include <thread>

#include "base/same_token.hpp"

namespace swarm::actors {

namespace {

void respond(mg_connection* conn, const char* status, const char* headers,
             std::string_view type, std::string_view body) {
  mg_printf(conn,
            "HTTP/1.1 %s\r\n%sContent-Type: %.*s\r\nContent-Length: %zu\r\n"
            "Cache-Control: no-store\r\nConnection: close\r\n\r\n",
            status, headers, static_cast<int>(type.size()), type.data(), body.size());
  mg_write(conn, body.data(), body.size());
}

} // namespace

result<std::unique_ptr<http_server>> http_server::start(const std::string& address,
                                                        uint16_t port,
                                                        const http_config& cfg,
                                                        std::vector<route> routes) {
  auto where = (address.find(':') != std::string::npos ? "[" + address + "]" : address) +
               ":" + std::to_string(port);
  std::unique_ptr<http_server> s{new http_server{cfg.token, std::move(routes)}};
  mg_callbacks callbacks;
  std::memset(&callbacks, 0, sizeof callbacks);
  // Its errors are returned below, not printed.
  callbacks.log_message = [](const mg_connection*, const char*) { return 1; };
  auto threads = std::to_string(cfg.threads < 1 ? 1 : cfg.threads);
  auto timeout = std::to_string(cfg.request_timeout.count());
  const char* options[] = {"listening_ports",
                           where.c_str(),
                           "num_threads",
                           threads.c_str(),
                           "request_timeout_ms",
                           timeout.c_str(),
                           "enable_keep_alive",
                           "no",
                           nullptr};
  s->ctx_ = mg_start(&callbacks, nullptr, options);
  if (!s->ctx_) return error{errc::io_error, "cannot listen on " + where};
  s->bindings_.reserve(s->routes_.size());
  for (auto& r : s->routes_) {
    s->bindings_.push_back({s.get(), &r});
    mg_set_request_handler(s->ctx_, (r.path + "$").c_str(), &http_server::on_request,
                           &s->bindings_.back());
  }
  mg_server_port ports[4];
  std::memset(ports, 0, sizeof ports);
  auto n = mg_get_server_ports(s->ctx_, 4, ports);
  s->port_ = n > 0 ? static_cast<uint16_t>(ports[0].port) : port;
  return s;
}

http_server::~http_server() {
  if (ctx_) mg_stop(ctx_);
}

bool http_server::authorized(mg_connection* conn) const {
  if (token_.empty()) return true;
  const char* given = mg_get_header(conn, "Authorization");
  return given && same_token(given, "Bearer " + token_);
}

int http_server::on_request(mg_connection* conn, void* bound) {
  auto& b = *static_cast<const binding*>(bound);
  const auto* info = mg_get_request_info(conn);
  if (std::strcmp(info->request_method, "GET") != 0) {
    respond(conn, "405 Method Not Allowed", "Allow: GET\r\n", "text/plain",
            "only GET is served here\n");
    return 405;
  }
  if (!b.served->open && !b.server->authorized(conn)) {
    respond(conn, "401 Unauthorized", "WWW-Authenticate: Bearer realm=\"swarm\"\r\n",
            "text/plain",
            "this endpoint needs the cluster's [http] token: send it as "
            "'Authorization: Bearer <token>'\n");
    return 401;
  }
  // civetweb's threads have small stacks (100 KiB as Debian builds it), and an answer
  // may dial the head and encode messages (deeper still under a sanitizer): it is made
  // on a thread of the default size while this one waits.
  reply r;
  std::string failed;
  std::thread maker{[&] {
    try {
      r = b.served->answer();
    } catch (const std::exception& e) {
      failed = e.what();
    }
  }};
  maker.join();
  if (!failed.empty()) {
    respond(conn, "500 Internal Server Error", "", "text/plain",
            "the answer to " + b.served->path + " failed: " + failed + "\n");
    return 500;
  }
  respond(conn, "200 OK", "", r.type, r.body);
  return 200;
}

} // namespace swarm::actors
