#include "tools/bench_session.hpp"

#include <algorithm>

namespace swarm::tools {

bench_plan plan_for(bool quick) {
  using ms = std::chrono::milliseconds;
  if (quick)
    return {3,      3'000, 3'000, 20'000, 10'000, 50'000, 200'000, 4, 300, 200, 5, ms(300),
            1'000,  ms(150), 20'000, 10'000, 2};
  return {5,      10'000, 10'000, 50'000, 20'000, 100'000, 500'000, 10, 1'000, 1'000, 20,
          ms(2'000), 5'000, ms(1'000), 50'000, 50'000, 5};
}

std::vector<size_t> latency_sizes() {
  return {64, 1024, 16 * 1024, 256 * 1024, 1024 * 1024};
}

bench_session::bench_session(bool quick, std::string filter)
    : plan_{plan_for(quick)}, filter_{std::move(filter)} {}

bool bench_session::wants(const std::string& name) {
  if (std::find(workloads_.begin(), workloads_.end(), name) == workloads_.end())
    workloads_.push_back(name);
  return filter_.empty() || name.find(filter_) != std::string::npos;
}

double bench_session::floor(const std::string& key, const std::string& unit,
                            const std::function<double()>& measure) {
  for (auto& r : rows_)
    if (r.key == key && r.ref_key.empty()) return r.value;
  double v = measure();
  rows_.push_back(floor_row(key, v, unit));
  return v;
}

} // namespace swarm::tools
