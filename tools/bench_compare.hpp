#pragma once

#include <string>
#include <utility>
#include <vector>

namespace swarm::tools {

/// A `swarm bench --json` report: its keys in file order, with their values.
using bench_figures = std::vector<std::pair<std::string, double>>;

/// Reads a report written by `swarm bench --json`: one JSON object whose values are all
/// numbers. Throws std::runtime_error naming the file, the line and what was wrong.
bench_figures read_bench_json(const std::string& path);

/// `swarm bench --compare OLD NEW`: prints NEW/OLD for every key in both, then the keys
/// only in one. Returns the exit code (1, with the reason on stderr, for a bad file).
int run_compare(const std::string& old_path, const std::string& new_path);

} // namespace swarm::tools
