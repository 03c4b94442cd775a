#pragma once

#include <string>

namespace swarm {

/// Why `secret` is too weak to guard a cluster (the example file's placeholder, or less
/// than 64 bits of entropy as its characters' spread estimates it); empty when it is not.
/// `swarm check-config` refuses such a file; a node still starts with it.
std::string secret_weakness(const std::string& secret);

} // namespace swarm
