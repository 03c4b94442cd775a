#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace swarm::wire_msg {

/// Whether, and how, a node's connections are encrypted with TLS 1.3.
struct tls_options {
  enum class mode {
    /// Never: every frame crosses in the clear (logged as a warning where a node
    /// listens beyond loopback).
    off,
    /// On every connection that leaves the host: a dial to, or an accept from, an address
    /// outside 127.0.0.0/8. Loopback peers may speak TLS or not.
    automatic,
    /// On every connection, loopback too.
    on,
  };
  mode use = mode::automatic;
  /// Certificates from files (PEM): this node's chain, its private key, and the
  /// authority every peer's certificate must be signed by. All empty: a pre-shared key
  /// derived from the cluster secret, and no certificates.
  std::string cert;
  std::string key;
  std::string ca;

  bool certificates() const noexcept { return !cert.empty(); }
};

/// "off", "auto" or "on".
const char* to_string(tls_options::mode m) noexcept;

/// The mode named "auto", "on" or "off"; none for anything else.
std::optional<tls_options::mode> tls_mode_of(std::string_view text) noexcept;

/// Whether a connection with the peer at `host` (an IPv4 address) is encrypted: always
/// for `on`, never for `off`, and for `automatic` when `host` is not a loopback address.
bool tls_required(tls_options::mode m, const std::string& host) noexcept;

} // namespace swarm::wire_msg
