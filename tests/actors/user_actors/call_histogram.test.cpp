#include <doctest/doctest.h>

#include <chrono>

#include "actors/user_actors/call_histogram.hpp"

using namespace std::chrono_literals;
using swarm::actors::call_histogram;

TEST_CASE("a call histogram counts each duration in the first bucket that holds it") {
  call_histogram h;
  h.record(3us);   // <= 10 us
  h.record(10us);  // <= 10 us: bounds are inclusive
  h.record(700us); // <= 1 ms
  h.record(2s);    // <= 5 s
  h.record(60s);   // above every bound
  auto s = h.read();
  CHECK(s.count == 5);
  CHECK(s.counts[0] == 2);
  CHECK(s.counts[4] == 1);
  CHECK(s.counts[11] == 1);
  CHECK(s.counts[12] == 1);
  CHECK(s.sum_seconds == doctest::Approx(62.000713));
  auto twice = s;
  twice += s;
  CHECK(twice.count == 10);
  CHECK(twice.counts[0] == 4);
}
