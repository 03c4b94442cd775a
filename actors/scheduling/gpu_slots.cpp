#include "actors/scheduling/gpu_slots.hpp"

#include <cmath>
#include <optional>

namespace swarm::actors {

namespace {

// Shares are sums of user fractions: compare with room for rounding.
constexpr double slack = 1e-9;

} // namespace

gpu_slots::gpu_slots(double total) {
  if (!(total > slack)) return;
  auto whole = static_cast<size_t>(std::floor(total + slack));
  free_.assign(whole, 1.0);
  if (auto rest = total - static_cast<double>(whole); rest > slack) free_.push_back(rest);
}

bool gpu_slots::fits(double amount) const {
  if (!(amount > slack)) return true;
  auto whole = static_cast<size_t>(std::floor(amount + slack));
  auto fraction = amount - static_cast<double>(whole);
  size_t free_whole = 0;
  bool fraction_fits = fraction <= slack;
  // A device used whole is not also where the fraction goes, unless another whole one
  // is spare: count whole devices, then look for room among the rest.
  for (auto f : free_)
    if (f >= 1.0 - slack) ++free_whole;
  if (free_whole < whole) return false;
  if (fraction_fits) return true;
  if (free_whole > whole) return true;
  for (auto f : free_)
    if (f < 1.0 - slack && f >= fraction - slack) return true;
  return false;
}

std::vector<gpu_share> gpu_slots::take(double amount) {
  std::vector<gpu_share> out;
  if (!(amount > slack) || !fits(amount)) return out;
  auto whole = static_cast<size_t>(std::floor(amount + slack));
  auto fraction = amount - static_cast<double>(whole);
  if (fraction > slack) {
    std::optional<size_t> best;
    for (size_t i = 0; i < free_.size(); ++i)
      if (free_[i] >= fraction - slack && (!best || free_[i] < free_[*best])) best = i;
    // Fits: a partly used device, or a whole one beyond those needed whole.
    out.emplace_back(static_cast<uint32_t>(*best), fraction);
    free_[*best] -= fraction;
  }
  for (size_t i = 0; i < free_.size() && whole > 0; ++i)
    if (free_[i] >= 1.0 - slack) {
      out.emplace_back(static_cast<uint32_t>(i), 1.0);
      free_[i] -= 1.0;
      --whole;
    }
  return out;
}

void gpu_slots::give(const std::vector<gpu_share>& shares) {
  for (auto& [device, share] : shares)
    if (device < free_.size()) free_[device] += share;
}

void gpu_slots::hold(const std::vector<gpu_share>& shares) {
  for (auto& [device, share] : shares)
    if (device < free_.size()) free_[device] -= share;
}

std::vector<uint32_t> device_ids(const std::vector<gpu_share>& shares) {
  std::vector<uint32_t> out;
  for (auto& s : shares)
    out.push_back(s.first);
  return out;
}

} // namespace swarm::actors
