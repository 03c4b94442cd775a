#include <doctest/doctest.h>

#include "actors/scheduling/gpu_slots.hpp"

using swarm::actors::device_ids;
using swarm::actors::gpu_share;
using swarm::actors::gpu_slots;

TEST_CASE("two tasks of half a GPU share one device, and a whole GPU takes a free one") {
  gpu_slots g{2};
  REQUIRE(g.devices() == 2);
  auto a = g.take(0.5), b = g.take(0.5), c = g.take(1);
  CHECK(device_ids(a) == std::vector<uint32_t>{0});
  CHECK(device_ids(b) == std::vector<uint32_t>{0}); // packed beside the first half
  CHECK(device_ids(c) == std::vector<uint32_t>{1});
  CHECK_FALSE(g.fits(0.1));
  g.give(a);
  CHECK(g.fits(0.5));
  CHECK_FALSE(g.fits(1)); // half of device 0 is free, no device is whole
}

TEST_CASE("a GPU demand is whole devices for its integral part and a shared one for its "
          "fraction, free GPUs spread over devices do not make a whole one") {
  gpu_slots g{3};
  auto half = g.take(0.5);
  auto half2 = g.take(0.5); // devices: 0 full, 1 and 2 whole
  g.give(half2);            // 0 half used
  CHECK(g.fits(2));
  auto big = g.take(1.5); // its fraction packs on device 0, the whole one on device 1
  REQUIRE(big.size() == 2);
  CHECK(big[0] == gpu_share{0, 0.5});
  CHECK(big[1] == gpu_share{1, 1.0});
  CHECK_FALSE(g.fits(1.5));
  CHECK(g.fits(1));
  g.give(big);
  g.give(half);
  CHECK(g.fits(3));
  CHECK(g.take(4).empty()); // more than there is: nothing taken
  CHECK(g.fits(3));
}

TEST_CASE("a fraction of GPUs configured becomes a last, partial device") {
  gpu_slots g{1.5};
  CHECK(g.devices() == 2);
  CHECK(g.fits(1.5));
  auto x = g.take(0.5);
  CHECK(device_ids(x) == std::vector<uint32_t>{1}); // the partial device, exactly full
  CHECK(g.fits(1));
  CHECK_FALSE(g.fits(1.1));
  gpu_slots none{0};
  CHECK(none.devices() == 0);
  CHECK(none.fits(0));
  CHECK_FALSE(none.fits(0.5));
}

TEST_CASE("a blocked task's devices are lent out and held again when it resumes") {
  gpu_slots g{1};
  auto a = g.take(1);
  g.give(a); // its worker blocked in `get`
  auto b = g.take(1);
  CHECK(device_ids(b) == std::vector<uint32_t>{0});
  g.hold(a); // it resumed: the device is oversubscribed until one ends
  CHECK_FALSE(g.fits(0.1));
  g.give(b);
  CHECK_FALSE(g.fits(0.1));
  g.give(a);
  CHECK(g.fits(1));
}
