#include "base/ready_memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <system_error>
#include <thread>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 // Linux 5.14; older kernels answer EINVAL
#endif

namespace swarm {

namespace {

void populate(uintptr_t begin, uintptr_t end) noexcept {
  ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
}

} // namespace

void ready_memory(void* p, size_t n) noexcept {
  if (n < ready_memory_min) return;
  auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  auto begin = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  auto end = (reinterpret_cast<uintptr_t>(p) + n) / page * page;
  if (end <= begin) return;
  if (end - begin >= ready_memory_split && std::thread::hardware_concurrency() > 1) {
    auto mid = begin + (end - begin) / 2 / page * page;
    try {
      std::thread other{populate, mid, end};
      populate(begin, mid);
      other.join();
      return;
    } catch (const std::system_error&) { // no thread to be had: all here
    }
  }
  populate(begin, end);
}

} // namespace swarm
