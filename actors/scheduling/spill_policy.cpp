#include "actors/scheduling/spill_policy.hpp"

#include <numeric>
#include <tuple>

namespace swarm::actors {

namespace {

// splitmix64: a well-mixed number from a counter.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

} // namespace

std::string best_spill_target(const std::vector<spill_candidate>& candidates) {
  auto rank = [](const spill_candidate& c) {
    return std::make_tuple(!c.room, -static_cast<int64_t>(c.input_bytes), c.ahead);
  };
  const spill_candidate* best = nullptr;
  for (auto& c : candidates)
    if (!best || rank(c) < rank(*best)) best = &c;
  return best ? best->name : std::string{};
}

spill_draw::spill_draw(size_t n, uint64_t draw) : n_(n) {
  if (n_ == 0) return;
  auto r = mix(draw);
  start_ = static_cast<size_t>(r % n_);
  if (n_ > 1) {
    stride_ = 1 + static_cast<size_t>(mix(r) % (n_ - 1));
    while (std::gcd(stride_, n_) != 1)
      stride_ = stride_ % (n_ - 1) + 1;
  }
}

size_t spill_draw::next() {
  if (given_ >= n_) return n_;
  return (start_ + given_++ * stride_) % n_;
}

} // namespace swarm::actors
