#include "framework/secret_weakness.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>

namespace swarm {

std::string secret_weakness(const std::string& secret) {
  std::string lower;
  for (char ch : secret)
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (lower.find("change-me") != std::string::npos ||
      lower.find("changeme") != std::string::npos)
    return "is the example's placeholder: make one, e.g. with `openssl rand -hex 32`";
  // Shannon entropy of the characters as they occur, times the length: a lower bound's
  // estimate for a random string, generous to a chosen one.
  std::map<char, size_t> counts;
  for (char ch : secret)
    ++counts[ch];
  double bits = 0;
  for (auto& [ch, n] : counts) {
    double p = static_cast<double>(n) / static_cast<double>(secret.size());
    bits -= static_cast<double>(n) * std::log2(p);
  }
  if (bits < 64) {
    char text[160];
    std::snprintf(text, sizeof text,
                  "has about %.0f bits of entropy, fewer than 64: make one, e.g. with "
                  "`openssl rand -hex 32`",
                  bits);
    return text;
  }
  return {};
}

} // namespace swarm
