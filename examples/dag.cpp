// A DAG of futures: fan out over chunks, pass the futures on as arguments (no copies on
// the node), and fan in with a reduce tree.
#include <cstdio>
#include <numeric>
#include <vector>

#include "framework/swarm.hpp"

int main() {
  swarm::application app;
  auto make_chunk = app.function("make_chunk", [](int first, int n) {
    std::vector<double> v(static_cast<size_t>(n));
    std::iota(v.begin(), v.end(), static_cast<double>(first));
    return v;
  });
  auto chunk_sum = app.function("chunk_sum", [](const std::vector<double>& v) {
    return std::accumulate(v.begin(), v.end(), 0.0);
  });
  auto add = app.function("add", [](double a, double b) { return a + b; });

  swarm::runtime rt{app};
  const int chunks = 32, per_chunk = 100000;
  std::vector<swarm::object_ref<double>> sums;
  for (int c = 0; c < chunks; ++c) {
    auto chunk = rt.submit(make_chunk, c * per_chunk, per_chunk); // fan out
    sums.push_back(rt.submit(chunk_sum, chunk));                  // future as argument
  }
  while (sums.size() > 1) { // fan in, pairwise
    std::vector<swarm::object_ref<double>> next;
    for (size_t i = 0; i + 1 < sums.size(); i += 2)
      next.push_back(rt.submit(add, sums[i], sums[i + 1]));
    if (sums.size() % 2) next.push_back(sums.back());
    sums = next;
  }
  double n = double(chunks) * per_chunk;
  double want = (n - 1) * n / 2;
  double got = sums[0].get().value();
  std::printf("sum of 0..%.0f = %.0f (expected %.0f)\n", n - 1, got, want);
  return got == want ? 0 : 1;
}
