#include "base/human_bytes.hpp"

#include <cstdio>

namespace swarm {

std::string human_bytes(uint64_t n) {
  static const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  char buf[32];
  if (n < 1024) {
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(n));
    return buf;
  }
  auto x = static_cast<double>(n) / 1024;
  size_t unit = 0;
  for (; x >= 1024 && unit + 1 < sizeof units / sizeof *units; ++unit)
    x /= 1024;
  std::snprintf(buf, sizeof buf, "%.2f %s", x, units[unit]);
  return buf;
}

} // namespace swarm
