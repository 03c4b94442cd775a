#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "actors/observability/http_server.hpp"
#include "base/result.hpp"
#include "framework/runtime_config.hpp"

namespace swarm::actors {

/// The head's status page, served over HTTP: `/` is the page (self-contained, no
/// internet needed), which shows `/api/status` (JSON) and refreshes itself. A snapshot is
/// made at most once per `max_age`, however many pages watch. With `http.token`, the page
/// sends the token its address carries after `#token=` (never sent to the server itself).
class dashboard {
public:
  /// Makes the JSON text of one snapshot; runs on an HTTP thread.
  using snapshot = std::function<std::string()>;

  /// Serves node `node`'s dashboard on `address`:`port` (0: a free port); an error names
  /// the node and the address when it cannot listen there.
  static result<std::unique_ptr<dashboard>>
  start(const std::string& node, const std::string& address, uint16_t port,
        const http_config& http, snapshot make,
        std::chrono::milliseconds max_age = std::chrono::milliseconds{1000});
  ~dashboard();

  dashboard(const dashboard&) = delete;
  dashboard& operator=(const dashboard&) = delete;

  /// The port it listens on.
  uint16_t port() const noexcept;

private:
  dashboard(snapshot make, std::chrono::milliseconds max_age)
      : make_(std::move(make)), max_age_(max_age) {}

  std::string status();

  snapshot make_;
  std::chrono::milliseconds max_age_;
  // Guards the last snapshot: HTTP threads share it, so page loads within max_age ask
  // the cluster once.
  std::mutex mtx_;
  std::string last_;
  std::chrono::steady_clock::time_point made_;
  // Last: its threads call into the members above until it is gone.
  std::unique_ptr<http_server> server_;
};

} // namespace swarm::actors
