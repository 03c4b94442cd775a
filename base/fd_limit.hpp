#pragma once

#include <cstddef>

namespace swarm {

/// Raises this process's soft limit on open files to its hard limit (a head of a
/// thousand nodes holds a socket per node, past the usual soft limit of 1,024); the
/// limit in force afterwards.
size_t raise_fd_limit() noexcept;

} // namespace swarm
