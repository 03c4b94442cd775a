#include "tools/bench_report.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <utility>

namespace swarm::tools {

namespace {

/// The percentiles a curve reports, with their key suffixes.
struct percentile_field {
  const char* name;
  double latency_stats::*field;
};

constexpr percentile_field percentiles[] = {{"p50", &latency_stats::p50},
                                            {"p90", &latency_stats::p90},
                                            {"p99", &latency_stats::p99},
                                            {"p999", &latency_stats::p999},
                                            {"max", &latency_stats::max}};

std::string point_key(const std::string& key, size_t bytes, const char* pct) {
  return key + "_" + std::to_string(bytes) + "b_" + pct + "_us";
}

} // namespace

figure versus(std::string key, double value, std::string unit, std::string ref_key,
              double ref) {
  return {
      std::move(key), value, std::move(unit), std::move(ref_key), ref, goal::none, 0, ""};
}

figure floor_row(std::string key, double value, std::string unit) {
  return {std::move(key), value, std::move(unit), "", 0, goal::none, 0, ""};
}

double ratio_of(const figure& f) {
  return f.ref > 0 ? f.value / f.ref : 0;
}

bool met(const figure& f) {
  switch (f.kind) {
  case goal::at_least:
    return f.value >= f.target;
  case goal::at_most:
    return f.value <= f.target;
  case goal::below:
    return f.value < f.target;
  case goal::ratio_at_most:
    return f.ref > 0 && ratio_of(f) <= f.target;
  case goal::ratio_at_least:
    return f.ref > 0 && ratio_of(f) >= f.target;
  case goal::none:
    break;
  }
  return true;
}

std::vector<figure> curve_rows(const latency_curve& c) {
  std::vector<figure> calls, floors;
  for (auto& p : c.points)
    for (auto& pct : percentiles) {
      auto fk = point_key(c.floor_key, p.bytes, pct.name);
      calls.push_back(versus(point_key(c.key, p.bytes, pct.name), p.call.*pct.field, "us",
                             fk, p.floor.*pct.field));
      floors.push_back(floor_row(fk, p.floor.*pct.field, "us"));
    }
  calls.insert(calls.end(), floors.begin(), floors.end());
  return calls;
}

void print_rows(const std::vector<figure>& rows) {
  std::printf("%-44s %14s %-8s %-34s %14s %9s  %-18s %s\n", "figure", "value", "unit",
              "floor/reference", "ref value", "ratio", "target", "");
  for (auto& f : rows) {
    if (f.ref_key.empty()) continue;
    std::printf("%-44s %14.2f %-8s %-34s %14.2f %8.3fx  %-18s %s\n", f.key.c_str(),
                f.value, f.unit.c_str(), f.ref_key.c_str(), f.ref, ratio_of(f),
                f.target_text.empty() ? "-" : f.target_text.c_str(),
                f.kind == goal::none ? "" : (met(f) ? "MET" : "MISSED"));
  }
  std::printf("\nfloors and references measured in the same run:\n");
  for (auto& f : rows)
    if (f.ref_key.empty())
      std::printf("  %-42s %14.2f %s\n", f.key.c_str(), f.value, f.unit.c_str());
}

void print_curves(const std::vector<latency_curve>& curves) {
  for (auto& c : curves) {
    std::printf("\n%s (µs; floor: %s)\n", c.title.c_str(), c.floor_key.c_str());
    std::printf("%10s %8s %9s %9s %9s %9s %9s | %9s %9s %9s | %8s %8s\n", "bytes",
                "calls", "p50", "p90", "p99", "p99.9", "max", "floor p50", "floor p99",
                "floor max", "p50 x", "p99 x");
    for (auto& p : c.points) {
      auto ratio = [](double a, double b) { return b > 0 ? a / b : 0; };
      std::printf("%10zu %8zu %9.1f %9.1f %9.1f %9.1f %9.1f | %9.1f %9.1f %9.1f | %7.2fx "
                  "%7.2fx\n",
                  p.bytes, p.call.count, p.call.p50, p.call.p90, p.call.p99, p.call.p999,
                  p.call.max, p.floor.p50, p.floor.p99, p.floor.max,
                  ratio(p.call.p50, p.floor.p50), ratio(p.call.p99, p.floor.p99));
    }
  }
}

bool write_json(const std::string& path, const std::vector<figure>& rows,
                const std::vector<latency_curve>& curves) {
  std::vector<figure> all = rows;
  for (auto& c : curves) {
    auto more = curve_rows(c);
    all.insert(all.end(), more.begin(), more.end());
  }
  std::ofstream out{path};
  if (!out) return false;
  char buf[64];
  out << "{\n";
  for (size_t i = 0; i < all.size(); ++i) {
    auto v = all[i].value;
    std::snprintf(buf, sizeof buf, "%.4f", std::isfinite(v) ? v : 0.0);
    out << "  \"" << all[i].key << "\": " << buf << (i + 1 < all.size() ? ",\n" : "\n");
  }
  out << "}\n";
  return static_cast<bool>(out);
}

} // namespace swarm::tools
