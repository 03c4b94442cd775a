#pragma once

// SVG pictures of a `swarm bench` run, written by hand (no dependencies).

#include <string>
#include <vector>

#include "tools/bench_report.hpp"

namespace swarm::tools {

/// Latency percentiles by message size, one panel per curve, log-log scale, each beside
/// its floor (dashed). An SVG document.
std::string latency_svg(const std::vector<latency_curve>& curves);

/// Every figure that has a floor, as a bar of its ratio to that floor on a log scale
/// around 1x, labelled with the value and the floor. An SVG document.
std::string ratios_svg(const std::vector<figure>& rows);

/// Writes `latency.svg` (when there are curves) and `ratios.svg` into `dir`, creating it.
/// Returns the paths written; throws std::runtime_error naming a path it cannot write.
std::vector<std::string> write_plots(const std::string& dir,
                                     const std::vector<figure>& rows,
                                     const std::vector<latency_curve>& curves);

} // namespace swarm::tools
