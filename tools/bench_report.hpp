#pragma once

#include <string>
#include <vector>

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

/// The figure over its floor; 0 without one.
double ratio_of(const figure& f);

/// Whether the figure meets its target (true when it has none).
bool met(const figure& f);

/// Prints the figures with their floors and targets, then the floors.
void print_rows(const std::vector<figure>& rows);

/// Writes every figure as one JSON object of key: value.
bool write_json(const std::string& path, const std::vector<figure>& rows);

} // namespace swarm::tools
