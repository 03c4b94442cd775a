#pragma once

#include <string_view>

namespace swarm {

/// Whether `given` is `expected`, compared in time that depends on the lengths only, not
/// on where they first differ (for tokens that guard an endpoint).
inline bool same_token(std::string_view given, std::string_view expected) {
  unsigned char diff = given.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < given.size() && i < expected.size(); ++i)
    diff |= static_cast<unsigned char>(given[i] ^ expected[i]);
  return diff == 0;
}

} // namespace swarm
