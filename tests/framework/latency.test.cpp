#include <doctest/doctest.h>

#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "framework/latency.hpp"

TEST_CASE("summarize_latency gives nearest-rank percentiles, the maximum and the mean") {
  std::vector<double> us;
  for (int i = 1000; i >= 1; --i) // unsorted on purpose
    us.push_back(i);
  auto s = swarm::summarize_latency(us);
  CHECK(s.count == 1000);
  CHECK(s.p50 == 500);
  CHECK(s.p90 == 900);
  CHECK(s.p99 == 990);
  CHECK(s.p999 == 999);
  CHECK(s.max == 1000);
  CHECK(s.mean == doctest::Approx(500.5));
}

TEST_CASE("summarize_latency of one sample puts every percentile on it") {
  auto s = swarm::summarize_latency({7.5});
  CHECK(s.count == 1);
  CHECK(s.p50 == 7.5);
  CHECK(s.p999 == 7.5);
  CHECK(s.max == 7.5);
}

TEST_CASE("summarize_latency of no samples is all zeros") {
  auto s = swarm::summarize_latency({});
  CHECK(s.count == 0);
  CHECK(s.p50 == 0);
  CHECK(s.max == 0);
  CHECK(s.mean == 0);
}

TEST_CASE("measure_latency makes the warm-up calls untimed, then the timed ones") {
  size_t calls = 0;
  auto s = swarm::measure_latency(
      [&] { ++calls; }, swarm::latency_options{5, 40, std::chrono::seconds(10)});
  CHECK(calls == 45);
  CHECK(s.count == 40);
  CHECK(s.p50 <= s.p90);
  CHECK(s.p99 <= s.max);
}

TEST_CASE("measure_latency stops at its time cap before all iterations") {
  auto s = swarm::measure_latency(
      [] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); },
      swarm::latency_options{0, 100'000, std::chrono::milliseconds(20)});
  CHECK(s.count >= 1);
  CHECK(s.count <= 11);
  CHECK(s.p50 >= 2'000);
}

TEST_CASE("measure_latency refuses zero iterations and passes on the call's exception") {
  CHECK_THROWS_AS(swarm::measure_latency(
                      [] {}, swarm::latency_options{0, 0, std::chrono::seconds(1)}),
                  std::invalid_argument);
  CHECK_THROWS_AS(swarm::measure_latency([] { throw std::runtime_error("call failed"); }),
                  std::runtime_error);
}
