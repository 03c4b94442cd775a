#pragma once

#include <cstdint>
#include <string>

namespace swarm {

/// `n` bytes as a person reads them: "512 B", "1.50 KiB", "2.00 MiB", "8.84 GiB".
std::string human_bytes(uint64_t n);

} // namespace swarm
