#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <prometheus/metric_family.h>

#include "actors/observability/http_server.hpp"
#include "base/result.hpp"
#include "framework/runtime_config.hpp"

namespace swarm::actors {

/// The metric families one scrape of a node collects; every metric carries the label
/// `node`.
class metric_set {
public:
  using labels = std::vector<std::pair<std::string, std::string>>;

  explicit metric_set(std::string node) : node_(std::move(node)) {}

  void gauge(const std::string& name, const std::string& help, double value,
             const labels& extra = {});
  void counter(const std::string& name, const std::string& help, double value,
               const labels& extra = {});
  /// A histogram: `counts[i]` samples at most `bounds[i]`, above the bound before it (one
  /// more count than bounds: the rest); `sum` of all samples.
  void histogram(const std::string& name, const std::string& help,
                 const std::vector<double>& bounds, const std::vector<uint64_t>& counts,
                 double sum, const labels& extra = {});

  std::vector<prometheus::MetricFamily> take() { return std::move(families_); }

private:
  prometheus::ClientMetric& add(const std::string& name, const std::string& help,
                                prometheus::MetricType type, const labels& extra);

  std::string node_;
  std::vector<prometheus::MetricFamily> families_;
  std::map<std::string, size_t> index_;
};

/// A node's metrics, served in Prometheus' text format at `http://ADDRESS:PORT/metrics`.
/// Nothing is counted for it on the hot paths: each scrape asks the node's parts for
/// their numbers (`collector`, on one of the HTTP server's threads, one scrape at a
/// time).
class node_metrics {
public:
  using collector = std::function<void(metric_set&)>;

  /// Serves node `node`'s metrics on `address`:`port` (0: a free port); an error names
  /// the node and the address when it cannot listen there.
  static result<std::unique_ptr<node_metrics>>
  start(const std::string& node, const std::string& address, uint16_t port,
        const http_config& http, collector collect);
  ~node_metrics();

  node_metrics(const node_metrics&) = delete;
  node_metrics& operator=(const node_metrics&) = delete;

  /// The port it listens on.
  uint16_t port() const noexcept;

private:
  node_metrics(std::string node, collector collect)
      : node_(std::move(node)), collect_(std::move(collect)) {}

  std::string scrape();

  std::string node_;
  collector collect_;
  std::mutex mtx_; // one scrape at a time: each asks the node's actors in turn
  // Last: its threads call scrape() until it is gone.
  std::unique_ptr<http_server> server_;
};

} // namespace swarm::actors
