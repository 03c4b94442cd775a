#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "framework/latency.hpp"

namespace swarm::tools {

/// How a figure is judged against the target.
enum class goal { none, at_least, at_most, below, ratio_at_most, ratio_at_least };

/// One row of a benchmark report.
struct figure {
  std::string key;
  double value = 0;
  std::string unit;
  std::string ref_key; // empty: a floor or reference itself
  double ref = 0;
  goal kind = goal::none;
  double target = 0;
  std::string target_text;
};

/// A figure beside its floor, with no target.
figure versus(std::string key, double value, std::string unit, std::string ref_key,
              double ref);

/// A floor or reference: a row with no floor of its own.
figure floor_row(std::string key, double value, std::string unit);

/// One message size of a latency curve: the call and its floor, same size, same run.
struct latency_point {
  size_t bytes = 0;
  latency_stats call;
  latency_stats floor;
};

/// Latency by message size of one kind of call beside a floor.
struct latency_curve {
  std::string key;       // figure keys are `<key>_<bytes>b_<p50|p90|p99|p999|max>_us`
  std::string floor_key; // the floor's keys, likewise
  std::string title;
  std::vector<latency_point> points;
};

/// The figure over its floor; 0 without one.
double ratio_of(const figure& f);

/// Whether the figure meets its target (true when it has none).
bool met(const figure& f);

/// The rows of a curve's every percentile, each beside its floor, then the floors.
std::vector<figure> curve_rows(const latency_curve& c);

/// Prints the figures with their floors and targets, then the floors.
void print_rows(const std::vector<figure>& rows);

/// Prints one table per curve: percentiles by message size, the floor, the ratio.
void print_curves(const std::vector<latency_curve>& curves);

/// Writes every figure, and every row of every curve, as one JSON object of key: value.
bool write_json(const std::string& path, const std::vector<figure>& rows,
                const std::vector<latency_curve>& curves);

} // namespace swarm::tools
