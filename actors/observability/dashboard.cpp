#include "actors/observability/dashboard.hpp"

#include <civetweb.h>

#include <cstring>
#include <string_view>

#include "actors/observability/dashboard_page.hpp"

namespace swarm::actors {

namespace {

void reply(mg_connection* conn, const char* type, std::string_view body) {
  mg_printf(conn,
            "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
            "Cache-Control: no-store\r\nConnection: close\r\n\r\n",
            type, body.size());
  mg_write(conn, body.data(), body.size());
}

} // namespace

result<std::unique_ptr<dashboard>> dashboard::start(const std::string& node,
                                                    const std::string& address,
                                                    uint16_t port, snapshot make,
                                                    std::chrono::milliseconds max_age) {
  auto where = (address.find(':') != std::string::npos ? "[" + address + "]" : address) +
               ":" + std::to_string(port);
  std::unique_ptr<dashboard> d{new dashboard{std::move(make), max_age}};
  mg_callbacks callbacks;
  std::memset(&callbacks, 0, sizeof callbacks);
  // Its errors are returned below, not printed.
  callbacks.log_message = [](const mg_connection*, const char*) { return 1; };
  const char* options[] = {"listening_ports", where.c_str(), "num_threads", "2", nullptr};
  d->ctx_ = mg_start(&callbacks, nullptr, options);
  if (!d->ctx_)
    return error{errc::io_error, "node '" + node + "' cannot serve its dashboard on " +
                                     where + " (is the port in use? see dashboard_port)"};
  mg_set_request_handler(d->ctx_, "/$", &dashboard::on_page, d.get());
  mg_set_request_handler(d->ctx_, "/api/status$", &dashboard::on_status, d.get());
  mg_server_port ports[4];
  std::memset(ports, 0, sizeof ports);
  auto n = mg_get_server_ports(d->ctx_, 4, ports);
  d->port_ = n > 0 ? static_cast<uint16_t>(ports[0].port) : port;
  return d;
}

dashboard::~dashboard() {
  if (ctx_) mg_stop(ctx_);
}

int dashboard::on_page(mg_connection* conn, void*) {
  reply(conn, "text/html; charset=utf-8", dashboard_page);
  return 200;
}

int dashboard::on_status(mg_connection* conn, void* self) {
  reply(conn, "application/json", static_cast<dashboard*>(self)->status());
  return 200;
}

std::string dashboard::status() {
  std::lock_guard<std::mutex> guard{mtx_};
  auto now = std::chrono::steady_clock::now();
  if (last_.empty() || now - made_ >= max_age_) {
    last_ = make_();
    made_ = std::chrono::steady_clock::now();
  }
  return last_;
}

} // namespace swarm::actors
