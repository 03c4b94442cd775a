#include "actors/observability/dashboard.hpp"

#include "actors/observability/dashboard_page.hpp"
#include "actors/observability/http_server.hpp"

namespace swarm::actors {

result<std::unique_ptr<dashboard>>
dashboard::start(const std::string& node, const std::string& address, uint16_t port,
                 const http_config& http, snapshot make,
                 std::chrono::milliseconds max_age) {
  std::unique_ptr<dashboard> d{new dashboard{std::move(make), max_age}};
  auto* self = d.get();
  std::vector<http_server::route> routes{
      {"/",
       [] {
         return http_server::reply{"text/html; charset=utf-8", dashboard_page};
       },
       true},
      {"/api/status",
       [self] {
         return http_server::reply{"application/json", self->status()};
       },
       false}};
  auto s = http_server::start(address, port, http, std::move(routes));
  if (!s)
    return error{errc::io_error, "node '" + node +
                                     "' cannot serve its dashboard: " + s.err().message +
                                     " (is the port in use? see dashboard_port)"};
  d->server_ = std::move(*s);
  return d;
}

dashboard::~dashboard() = default;

uint16_t dashboard::port() const noexcept {
  return server_->port();
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
