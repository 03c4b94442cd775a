#pragma once

// The user type the value-codec fuzz target decodes and its corpus generator encodes.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace swarm::fuzz {

/// A user type, encodable through its inspect overload.
struct sample {
  int32_t id = 0;
  std::string name;
  std::vector<double> weights;
  std::optional<bool> flag;
  std::pair<uint16_t, std::string> tag;
  std::vector<std::optional<int64_t>> slots;
};

template <class Inspector> bool inspect(Inspector& f, sample& x) {
  return f(x.id, x.name, x.weights, x.flag, x.tag, x.slots);
}

} // namespace swarm::fuzz
