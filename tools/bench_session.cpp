#include "tools/bench_session.hpp"

#include <algorithm>
#include <cstdio>

namespace swarm::tools {

bench_plan plan_for(bool quick) {
  using ms = std::chrono::milliseconds;
  bench_plan p{};
  p.reps = quick ? 3 : 5;
  p.rtt_calls = quick ? 3'000 : 10'000;
  p.sync_ops = quick ? 3'000 : 10'000;
  p.batch = quick ? 20'000 : 50'000;
  p.calls_per_caller = quick ? 10'000 : 20'000;
  p.put_ops = quick ? 50'000 : 100'000;
  p.get_ops = quick ? 200'000 : 500'000;
  p.big_ops = quick ? 4 : 10;
  p.actors_created = quick ? 300 : 1'000;
  p.ref_list_gets = quick ? 200 : 1'000;
  p.wait_runs = quick ? 5 : 20;
  p.cap = quick ? ms(300) : ms(2'000);
  p.latency_calls = quick ? 1'000 : 5'000;
  p.latency_cap = quick ? ms(150) : ms(1'000);
  p.remote_pipelined = quick ? 20'000 : 50'000;
  p.remote_tasks = quick ? 10'000 : 50'000;
  p.transfers = quick ? 2 : 5;
  p.drain_bytes = quick ? size_t{64} << 20 : size_t{1} << 30;
  return p;
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

void bench_session::skip(const std::string& name, const std::string& why) {
  skipped_.push_back(name + ": " + why);
  progress(name + " skipped: " + why);
}

void bench_session::progress(const std::string& what) {
  std::fprintf(
      stderr, "  [%6.1f s] %s\n",
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count(),
      what.c_str());
}

void bench_session::add(figure f) {
  char value[64];
  std::snprintf(value, sizeof value, ": %.4g %s", f.value, f.unit.c_str());
  progress(f.key + value);
  rows_.push_back(std::move(f));
}

void bench_session::add(latency_curve c) {
  progress(c.key + ": " + std::to_string(c.points.size()) + " message sizes");
  curves_.push_back(std::move(c));
}

double bench_session::floor(const std::string& key, const std::string& unit,
                            const std::function<double()>& measure) {
  for (auto& r : rows_)
    if (r.key == key && r.ref_key.empty()) return r.value;
  double v = measure();
  add(floor_row(key, v, unit));
  return v;
}

} // namespace swarm::tools
