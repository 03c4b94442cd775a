#include "framework/tls_env.hpp"

#include <cstdlib>

namespace swarm {

result<wire_msg::tls_options> tls_from_env(wire_msg::tls_options base) {
  if (const char* mode = std::getenv("SWARM_TLS"); mode && *mode) {
    auto m = wire_msg::tls_mode_of(mode);
    if (!m)
      return error{errc::invalid_argument,
                   std::string{"SWARM_TLS must be auto, on or off, got '"} + mode + "'"};
    base.use = *m;
  }
  for (auto [name, field] :
       {std::pair{"SWARM_TLS_CERT", &base.cert}, std::pair{"SWARM_TLS_KEY", &base.key},
        std::pair{"SWARM_TLS_CA", &base.ca}})
    if (const char* v = std::getenv(name); v && *v) *field = v;
  return base;
}

std::vector<std::string> tls_env(const wire_msg::tls_options& tls) {
  std::vector<std::string> out{std::string{"SWARM_TLS="} + to_string(tls.use)};
  if (tls.certificates()) {
    out.push_back("SWARM_TLS_CERT=" + tls.cert);
    out.push_back("SWARM_TLS_KEY=" + tls.key);
    out.push_back("SWARM_TLS_CA=" + tls.ca);
  }
  return out;
}

} // namespace swarm
