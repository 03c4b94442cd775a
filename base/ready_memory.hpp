#pragma once

#include <cstddef>

namespace swarm {

/// Buffers at least this large are worth `ready_memory`.
inline constexpr size_t ready_memory_min = 2 << 20;

/// Ranges at least this large are readied by two threads, half each: the kernel's
/// zeroing of fresh pages, not the faults, is most of the cost.
inline constexpr size_t ready_memory_split = 32 << 20;

/// Readies fresh memory that is about to be written whole: asks the kernel to fault
/// [p, p + n) in now, in one call rather than one trap per 4 KiB page. A hint: where the
/// kernel declines (before Linux 5.14), the first writes fault the pages in as usual.
/// Not huge pages: on this VM, asking for them made a 100 MB transfer swing between
/// 0.4 and 2.7 GB/s from run to run (compaction stalls), against 1.3-1.6 without.
void ready_memory(void* p, size_t n) noexcept;

} // namespace swarm
