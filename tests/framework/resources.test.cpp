#include <doctest/doctest.h>

#include <cmath>

#include "base/error.hpp"
#include "base/human_bytes.hpp"
#include "framework/resources.hpp"

TEST_CASE("fractional resource amounts add up and fit exactly") {
  swarm::resource_set cap = swarm::resource_set::cpus(1);
  swarm::resource_set tenth = swarm::resource_set::cpus(0.1);
  swarm::resource_set used;
  for (int i = 0; i < 10; ++i) {
    REQUIRE(tenth.fits_in(cap));
    cap -= tenth;
  }
  CHECK(cap.get("CPU") == doctest::Approx(0).epsilon(1e-9));
  CHECK_FALSE(tenth.fits_in(cap));
}

TEST_CASE("a demand for a resource the node lacks does not fit") {
  swarm::resource_set node;
  node.set("CPU", 4).set("GPU", 1);
  swarm::resource_set want;
  want.set("GPU", 1).set("TPU", 1);
  CHECK_FALSE(want.fits_in(node));
  CHECK(swarm::resource_set{}.fits_in(node));
}

TEST_CASE("invalid resource amounts are rejected with the resource named") {
  swarm::resource_set r;
  CHECK_THROWS_WITH_AS(r.set("GPU", -1), doctest::Contains("GPU"), swarm::failure);
  CHECK_THROWS_AS(r.set("CPU", std::nan("")), swarm::failure);
  CHECK_THROWS_AS(r.set("", 1), swarm::failure);
}

TEST_CASE("resource sets print their amounts") {
  swarm::resource_set r;
  r.set("CPU", 2).set("GPU", 0.5);
  CHECK(r.to_string() == "{CPU: 2, GPU: 0.5}");
}

TEST_CASE("memory resources and byte counts read in binary units") {
  CHECK(swarm::human_bytes(0) == "0 B");
  CHECK(swarm::human_bytes(1023) == "1023 B");
  CHECK(swarm::human_bytes(1536) == "1.50 KiB");
  CHECK(swarm::human_bytes(uint64_t{3} << 30) == "3.00 GiB");
  CHECK(swarm::human_bytes(uint64_t{5} << 50) == "5.00 PiB");
  swarm::resource_set r;
  r.set("CPU", 2).set("memory", 8.0 * (1 << 30)).set("gpu_memory", 512);
  CHECK(r.to_string() == "{CPU: 2, gpu_memory: 512, memory: 8.00 GiB}");
}
