#include "base/ready_memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 // Linux 5.14; older kernels answer EINVAL
#endif

namespace swarm {

void ready_memory(void* p, size_t n) noexcept {
  if (n < ready_memory_min) return;
  auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  auto begin = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  auto end = (reinterpret_cast<uintptr_t>(p) + n) / page * page;
  if (end <= begin) return;
  ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
}

} // namespace swarm
