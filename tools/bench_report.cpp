#include "tools/bench_report.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>

namespace swarm::tools {

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

void print_rows(const std::vector<figure>& rows) {
  std::printf("%-34s %14s %-8s %-34s %14s %9s  %-18s %s\n", "figure", "value", "unit",
              "floor/reference", "ref value", "ratio", "target", "");
  for (auto& f : rows) {
    if (f.ref_key.empty()) continue;
    std::printf("%-34s %14.2f %-8s %-34s %14.2f %8.3fx  %-18s %s\n", f.key.c_str(),
                f.value, f.unit.c_str(), f.ref_key.c_str(), f.ref, ratio_of(f),
                f.target_text.empty() ? "-" : f.target_text.c_str(),
                f.kind == goal::none ? "" : (met(f) ? "MET" : "MISSED"));
  }
  std::printf("\nfloors and references measured in the same run:\n");
  for (auto& f : rows)
    if (f.ref_key.empty())
      std::printf("  %-34s %14.2f %s\n", f.key.c_str(), f.value, f.unit.c_str());
}

bool write_json(const std::string& path, const std::vector<figure>& rows) {
  std::ofstream out{path};
  if (!out) return false;
  char buf[64];
  out << "{\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    auto v = rows[i].value;
    std::snprintf(buf, sizeof buf, "%.4f", std::isfinite(v) ? v : 0.0);
    out << "  \"" << rows[i].key << "\": " << buf << (i + 1 < rows.size() ? ",\n" : "\n");
  }
  out << "}\n";
  return static_cast<bool>(out);
}

} // namespace swarm::tools
