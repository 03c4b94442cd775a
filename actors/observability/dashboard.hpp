#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "base/result.hpp"

struct mg_context;
struct mg_connection;

namespace swarm::actors {

/// The head's status page, served over HTTP: `/` is the page (self-contained, no
/// internet needed), which shows `/api/status` (JSON) and refreshes itself. A snapshot is
/// made at most once per `max_age`, however many pages watch.
class dashboard {
public:
  /// Makes the JSON text of one snapshot; runs on an HTTP thread.
  using snapshot = std::function<std::string()>;

  /// Serves node `node`'s dashboard on `address`:`port` (0: a free port); an error names
  /// the node and the address when it cannot listen there.
  static result<std::unique_ptr<dashboard>>
  start(const std::string& node, const std::string& address, uint16_t port, snapshot make,
        std::chrono::milliseconds max_age = std::chrono::milliseconds{1000});
  ~dashboard();

  dashboard(const dashboard&) = delete;
  dashboard& operator=(const dashboard&) = delete;

  /// The port it listens on.
  uint16_t port() const noexcept { return port_; }

private:
  dashboard(snapshot make, std::chrono::milliseconds max_age)
      : make_(std::move(make)), max_age_(max_age) {}

  static int on_page(mg_connection* conn, void* self);
  static int on_status(mg_connection* conn, void* self);
  std::string status();

  snapshot make_;
  std::chrono::milliseconds max_age_;
  std::mutex mtx_; // guards the last snapshot; HTTP threads share it
  std::string last_;
  std::chrono::steady_clock::time_point made_;
  mg_context* ctx_ = nullptr;
  uint16_t port_ = 0;
};

} // namespace swarm::actors
