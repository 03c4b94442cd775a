#include "actors/observability/node_metrics.hpp"

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>

#include <exception>
#include <limits>

namespace swarm::actors {

namespace {

class scrape final : public prometheus::Collectable {
public:
  scrape(std::string node, node_metrics::collector collect)
      : node_(std::move(node)), collect_(std::move(collect)) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    metric_set out{node_};
    collect_(out);
    return out.take();
  }

private:
  std::string node_;
  node_metrics::collector collect_;
};

} // namespace

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

result<std::unique_ptr<node_metrics>> node_metrics::start(const std::string& node,
                                                          const std::string& address,
                                                          uint16_t port,
                                                          collector collect) {
  auto where = (address.find(':') != std::string::npos ? "[" + address + "]" : address) +
               ":" + std::to_string(port);
  std::unique_ptr<node_metrics> m{new node_metrics};
  try {
    // One thread: scrapes are rare, and each asks the node's actors in turn.
    m->exposer_ = std::make_unique<prometheus::Exposer>(where, 1);
  } catch (const std::exception& e) {
    return error{errc::io_error, "node '" + node + "' cannot serve its metrics on " +
                                     where + ": " + e.what() +
                                     " (is the port in use? see metrics_port)"};
  }
  auto c = std::make_shared<scrape>(node, std::move(collect));
  m->exposer_->RegisterCollectable(c);
  m->collectable_ = c;
  auto ports = m->exposer_->GetListeningPorts();
  m->port_ = ports.empty() ? port : static_cast<uint16_t>(ports.front());
  return m;
}

node_metrics::~node_metrics() = default;

} // namespace swarm::actors
