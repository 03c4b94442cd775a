#pragma once

#include <cstddef>

namespace swarm {

/// Buffers at least this large are worth `ready_memory`.
inline constexpr size_t ready_memory_min = 2 << 20;

/// Readies fresh memory that is about to be written whole: asks the kernel to back
/// [p, p + n) with transparent huge pages where it gives them, and to fault it in now,
/// in one call rather than one trap per 4 KiB page. A hint: where the kernel declines,
/// nothing changes and the first writes fault the pages in as usual.
void ready_memory(void* p, size_t n) noexcept;

} // namespace swarm
