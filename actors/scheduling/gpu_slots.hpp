#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace swarm::actors {

/// A device and the share of it a lease holds.
using gpu_share = std::pair<uint32_t, double>;

/// The GPUs of a node as its local scheduler hands them out: the share of each device
/// that is free. A demand of `g` GPUs takes `floor(g)` whole free devices and, for its
/// fraction, the device with the least room that still holds it (so that fractions pack
/// and whole devices stay free); two tasks of 0.5 share one device.
class gpu_slots {
public:
  /// `total` GPUs: whole devices, the last one holding what is left of a fraction.
  explicit gpu_slots(double total);

  /// Whether `amount` GPUs can be taken now (the total free may suffice while no device
  /// is whole: then it cannot).
  bool fits(double amount) const;

  /// Takes `amount` GPUs: the devices and shares given; empty for none (or when they do
  /// not fit).
  std::vector<gpu_share> take(double amount);

  /// Gives shares back (a lease ended, or its worker blocked).
  void give(const std::vector<gpu_share>& shares);

  /// Takes the same shares again (a blocked worker resumes; may oversubscribe briefly).
  void hold(const std::vector<gpu_share>& shares);

  size_t devices() const noexcept { return free_.size(); }

private:
  std::vector<double> free_;
};

/// The device indices of `shares`.
std::vector<uint32_t> device_ids(const std::vector<gpu_share>& shares);

} // namespace swarm::actors
