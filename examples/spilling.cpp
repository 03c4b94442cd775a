// More objects than the object store holds: with spilling on (the default), those
// nobody reads now go to disk, largest and least recently used first, and come back
// when read, byte for byte. The node's statistics count both ways.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "framework/swarm.hpp"

int main() {
  swarm::application app;
  swarm::runtime_config cfg;
  cfg.object_store_bytes = size_t{64} << 20; // 64 MiB of memory for objects
  cfg.object_pool_bytes = 0;
  swarm::runtime rt{app, cfg};

  // Ten 16 MiB arrays: 160 MiB, two and a half times the store.
  constexpr size_t n = size_t{16} << 20;
  std::vector<swarm::object_ref<std::vector<uint8_t>>> refs;
  for (uint8_t i = 0; i < 10; ++i)
    refs.push_back(rt.put(std::vector<uint8_t>(n, i)));
  auto after_puts = rt.stats();
  std::printf("put 160 MiB into a 64 MiB store: %zu objects on disk, %zu MiB there\n",
              after_puts.spilled_objects, after_puts.spilled_bytes >> 20);

  // Every one reads back whole, in any order; a spilled one is restored to read.
  int bad = 0;
  for (size_t k = refs.size(); k-- > 0;) {
    auto v = refs[k].get();
    if (!v || v->size() != n || (*v)[0] != k || (*v)[n - 1] != k) ++bad;
  }
  auto after_reads = rt.stats();
  std::printf("read all back: %d wrong; %zu spills and %zu restores since the start\n",
              bad, after_reads.spills, after_reads.restores);
  bad += after_puts.spilled_objects == 0 || after_reads.restores == 0;
  return bad == 0 ? 0 : 1;
}
