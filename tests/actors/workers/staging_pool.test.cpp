#include <doctest/doctest.h>

#include "actors/workers/staging_pool.hpp"

using swarm::actors::staging_pool;

TEST_CASE(
    "staging memory let go is kept for the next buffer of its size, within the pool's "
    "bytes, the least recently let go freed first") {
  auto api = std::make_shared<swarm::gpu::host_device_api>(std::vector<size_t>{1 << 20});
  auto pool = std::make_shared<staging_pool>(api, size_t{5} << 20);
  uint8_t* first = nullptr;
  {
    auto a = pool->take(3 << 20);
    REQUIRE(static_cast<bool>(a));
    first = a.get();
    a.get()[(3 << 20) - 1] = 1; // as big as asked
  }
  CHECK(pool->kept() == (size_t{3} << 20));
  auto again = pool->take((3 << 20) - 100); // rounds up to the same size
  CHECK(static_cast<void*>(again.get()) == static_cast<void*>(first));
  CHECK(pool->kept() == 0);
  auto two = pool->take(2 << 20);
  two.reset();
  again.reset(); // 3 MiB more would keep 5 MiB: both fit
  CHECK(pool->kept() == (size_t{5} << 20));
  pool->take(1 << 20).reset(); // the 2 MiB one, let go first of the two, goes
  CHECK(pool->kept() == (size_t{4} << 20));
  // Larger than all the pool keeps: freed at once.
  pool->take(6 << 20).reset();
  CHECK(pool->kept() == (size_t{4} << 20));
}
