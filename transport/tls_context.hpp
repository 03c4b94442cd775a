#pragma once

#include <openssl/ssl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "transport/tls_options.hpp"

namespace swarm::wire_msg {

/// What every TLS connection of an endpoint shares: OpenSSL's contexts for dialled and
/// accepted connections, TLS 1.3 only, and either a pre-shared key derived from the
/// cluster secret (with a fresh (EC)DHE exchange per connection, so recorded traffic
/// stays secret if the secret leaks later) or certificates that both ends verify against
/// the configured authority. No session tickets: every connection makes a full
/// handshake.
class tls_context {
public:
  /// Fails naming the file or the setting that is wrong.
  static result<std::shared_ptr<const tls_context>> make(const tls_options& o,
                                                         const std::string& secret);
  ~tls_context();
  tls_context(const tls_context&) = delete;
  tls_context& operator=(const tls_context&) = delete;

  SSL_CTX* client() const noexcept { return client_; }
  SSL_CTX* server() const noexcept { return server_; }
  const tls_options& options() const noexcept { return options_; }
  /// The pre-shared key; empty with certificates.
  const std::vector<uint8_t>& psk() const noexcept { return psk_; }

private:
  tls_context() = default;
  result<void> setup(SSL_CTX* ctx, bool server);

  tls_options options_;
  std::vector<uint8_t> psk_;
  SSL_CTX* client_ = nullptr;
  SSL_CTX* server_ = nullptr;
};

/// The text of OpenSSL's last errors on this thread (and clears them); `fallback` when
/// none.
std::string tls_errors(const std::string& fallback);

} // namespace swarm::wire_msg
