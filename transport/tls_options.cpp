#include "transport/tls_options.hpp"

namespace swarm::wire_msg {

const char* to_string(tls_options::mode m) noexcept {
  switch (m) {
  case tls_options::mode::off:
    return "off";
  case tls_options::mode::on:
    return "on";
  default:
    return "auto";
  }
}

bool tls_required(tls_options::mode m, const std::string& host) noexcept {
  switch (m) {
  case tls_options::mode::off:
    return false;
  case tls_options::mode::on:
    return true;
  default:
    return host.rfind("127.", 0) != 0 && host != "localhost";
  }
}

std::optional<tls_options::mode> tls_mode_of(std::string_view text) noexcept {
  if (text == "auto") return tls_options::mode::automatic;
  if (text == "on") return tls_options::mode::on;
  if (text == "off") return tls_options::mode::off;
  return std::nullopt;
}

} // namespace swarm::wire_msg
