#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <prometheus/metric_family.h>

#include "base/result.hpp"

namespace prometheus {
class Exposer;
} // namespace prometheus

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
/// their numbers (`collector`, on the HTTP server's thread).
class node_metrics {
public:
  using collector = std::function<void(metric_set&)>;

  /// Serves node `node`'s metrics on `address`:`port` (0: a free port); an error names
  /// the node and the address when it cannot listen there.
  static result<std::unique_ptr<node_metrics>> start(const std::string& node,
                                                     const std::string& address,
                                                     uint16_t port, collector collect);
  ~node_metrics();

  node_metrics(const node_metrics&) = delete;
  node_metrics& operator=(const node_metrics&) = delete;

  /// The port it listens on.
  uint16_t port() const noexcept { return port_; }

private:
  node_metrics() = default;

  std::shared_ptr<void> collectable_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  uint16_t port_ = 0;
};

} // namespace swarm::actors
