#include "framework/resources.hpp"

#include <cmath>
#include <sstream>

#include "base/error.hpp"
#include "base/human_bytes.hpp"

namespace swarm {

namespace {

// Tolerance for sums of fractional amounts such as 0.1 + 0.2.
constexpr double epsilon = 1e-9;

} // namespace

resource_set resource_set::cpus(double n) {
  resource_set r;
  r.set("CPU", n);
  return r;
}

resource_set& resource_set::set(const std::string& name, double amount) {
  if (name.empty())
    throw failure{{errc::invalid_argument, "resource name must not be empty"}};
  if (!std::isfinite(amount) || amount < 0)
    throw failure{{errc::invalid_argument, "resource '" + name + "' has invalid amount " +
                                               std::to_string(amount) +
                                               " (must be finite and >= 0)"}};
  if (amount == 0)
    amounts_.erase(name);
  else
    amounts_[name] = amount;
  return *this;
}

double resource_set::get(const std::string& name) const {
  auto i = amounts_.find(name);
  return i == amounts_.end() ? 0.0 : i->second;
}

bool resource_set::fits_in(const resource_set& capacity) const {
  for (auto& [name, amount] : amounts_)
    if (amount > capacity.get(name) + epsilon) return false;
  return true;
}

resource_set& resource_set::operator+=(const resource_set& other) {
  for (auto& [name, amount] : other.amounts_)
    amounts_[name] += amount;
  return *this;
}

resource_set& resource_set::operator-=(const resource_set& other) {
  for (auto& [name, amount] : other.amounts_) {
    auto& mine = amounts_[name];
    mine -= amount;
    if (std::fabs(mine) < epsilon) amounts_.erase(name);
  }
  return *this;
}

std::string resource_set::to_string() const {
  std::ostringstream out;
  out << '{';
  bool first = true;
  for (auto& [name, amount] : amounts_) {
    if (!first) out << ", ";
    first = false;
    out << name << ": ";
    // Memory is counted in bytes.
    if (name.find("memory") != std::string::npos && amount >= 1024)
      out << human_bytes(static_cast<uint64_t>(amount));
    else
      out << amount;
  }
  out << '}';
  return out.str();
}

} // namespace swarm
