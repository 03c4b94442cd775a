#include "actors/observability/node_metrics.hpp"

#include <prometheus/text_serializer.h>

#include "actors/observability/http_server.hpp"

#include <limits>

namespace swarm::actors {

prometheus::ClientMetric& metric_set::add(const std::string& name,
                                          const std::string& help,
                                          prometheus::MetricType type,
                                          const labels& extra) {
  auto [at, added] = index_.emplace(name, families_.size());
  if (added) families_.push_back({name, help, type, {}});
  auto& family = families_[at->second];
  auto& m = family.metric.emplace_back();
  m.label.push_back({"node", node_});
  for (auto& [k, v] : extra)
    m.label.push_back({k, v});
  return m;
}

void metric_set::gauge(const std::string& name, const std::string& help, double value,
                       const labels& extra) {
  add(name, help, prometheus::MetricType::Gauge, extra).gauge.value = value;
}

void metric_set::counter(const std::string& name, const std::string& help, double value,
                         const labels& extra) {
  add(name, help, prometheus::MetricType::Counter, extra).counter.value = value;
}

void metric_set::histogram(const std::string& name, const std::string& help,
                           const std::vector<double>& bounds,
                           const std::vector<uint64_t>& counts, double sum,
                           const labels& extra) {
  auto& h = add(name, help, prometheus::MetricType::Histogram, extra).histogram;
  uint64_t below = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    below += counts[i];
    h.bucket.push_back(
        {below, i < bounds.size() ? bounds[i] : std::numeric_limits<double>::infinity()});
  }
  h.sample_count = below;
  h.sample_sum = sum;
}

result<std::unique_ptr<node_metrics>>
node_metrics::start(const std::string& node, const std::string& address, uint16_t port,
                    const http_config& http, collector collect) {
  std::unique_ptr<node_metrics> m{new node_metrics{node, std::move(collect)}};
  auto* self = m.get();
  std::vector<http_server::route> routes{
      {"/metrics", [self] {
         return http_server::reply{"text/plain; version=0.0.4; charset=utf-8",
                                   self->scrape()};
       }}};
  auto s = http_server::start(address, port, http, std::move(routes));
  if (!s)
    return error{errc::io_error, "node '" + node +
                                     "' cannot serve its metrics: " + s.err().message +
                                     " (is the port in use? see metrics_port)"};
  m->server_ = std::move(*s);
  return m;
}

node_metrics::~node_metrics() = default;

uint16_t node_metrics::port() const noexcept {
  return server_->port();
}

std::string node_metrics::scrape() {
  std::lock_guard<std::mutex> guard{mtx_};
  metric_set out{node_};
  collect_(out);
  return prometheus::TextSerializer{}.Serialize(out.take());
}

} // namespace swarm::actors
