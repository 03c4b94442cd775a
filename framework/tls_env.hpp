#pragma once

#include <string>
#include <vector>

#include "base/result.hpp"
#include "transport/tls_options.hpp"

namespace swarm {

/// The TLS settings of a process the cluster started (a job, an autoscaled node), from
/// its environment: `SWARM_TLS` ("auto", "on", "off"), `SWARM_TLS_CERT`, `SWARM_TLS_KEY`
/// and `SWARM_TLS_CA`; what is unset stays as in `base`. An error names a bad value.
result<wire_msg::tls_options> tls_from_env(wire_msg::tls_options base = {});

/// The environment entries ("SWARM_TLS=on", ...) that give a child process `tls`.
std::vector<std::string> tls_env(const wire_msg::tls_options& tls);

} // namespace swarm
