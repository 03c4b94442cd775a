#pragma once

#include <map>
#include <string>

namespace swarm {

/// Amounts of named resources: "CPU", "GPU", "memory" (bytes) and any custom name.
/// Amounts may be fractional (0.5 CPU). Missing names count as zero.
class resource_set {
public:
  resource_set() = default;

  /// A demand of `cpus` CPUs and nothing else.
  static resource_set cpus(double n);

  /// Sets the amount of `name`; amounts must be finite and non-negative.
  resource_set& set(const std::string& name, double amount);

  /// The amount of `name`, 0 when absent.
  double get(const std::string& name) const;

  /// Whether every amount here is at most the one in `capacity`.
  bool fits_in(const resource_set& capacity) const;

  /// Adds or subtracts every amount of `other`.
  resource_set& operator+=(const resource_set& other);
  resource_set& operator-=(const resource_set& other); ///< see `operator+=`

  /// Whether it names no resource at all.
  bool empty() const { return amounts_.empty(); }
  /// Every amount by name.
  const std::map<std::string, double>& amounts() const { return amounts_; }

  /// "{CPU: 1, GPU: 0.5}".
  std::string to_string() const;

  /// The same amounts of the same names.
  friend bool operator==(const resource_set& a, const resource_set& b) {
    return a.amounts_ == b.amounts_;
  }

private:
  std::map<std::string, double> amounts_;
};

} // namespace swarm
