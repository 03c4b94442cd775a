#include <doctest/doctest.h>

#include <sys/resource.h>

#include "base/fd_limit.hpp"

TEST_CASE("a node raises its soft limit on open files to the hard limit") {
  rlimit r{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &r) == 0);
  // Lowered first, where the hard limit leaves room, so the raise is seen.
  if (r.rlim_max != RLIM_INFINITY && r.rlim_max > 256) {
    rlimit lower = r;
    lower.rlim_cur = 256;
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &lower) == 0);
  }
  auto now = swarm::raise_fd_limit();
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &r) == 0);
  CHECK(r.rlim_cur == r.rlim_max);
  if (r.rlim_max != RLIM_INFINITY) CHECK(now == r.rlim_max);
}
