#pragma once

#include <openssl/ssl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "transport/tls_context.hpp"
#include "transport/tls_records.hpp"

namespace swarm::wire_msg {

/// One connection's TLS 1.3: the handshake, run by OpenSSL on bytes this side moves to
/// and from the socket, then the record layer (`tls_sealer`, `tls_opener`) with the
/// traffic secrets the handshake agreed on. The two directions are separate objects, so
/// senders seal under their own lock while the I/O thread opens.
class tls_link {
public:
  /// A dialling side's first flight is in `output()` at once.
  tls_link(std::shared_ptr<const tls_context> ctx, bool server);
  ~tls_link();
  tls_link(const tls_link&) = delete;
  tls_link& operator=(const tls_link&) = delete;

  /// Takes `n` bytes from the peer; whether the handshake is done. What to send back is
  /// appended to `output()`. An error says why the handshake failed.
  result<bool> handshake(const uint8_t* data, size_t n);

  bool ready() const noexcept { return sealer_ != nullptr; }

  /// Handshake bytes to send, in order, before any record.
  std::vector<uint8_t>& output() noexcept { return out_; }

  /// Once ready: a value both ends derive from this session only (an exporter, RFC 8446
  /// §7.5), which Swarm's own proof of the secret covers, so a proof never fits another
  /// TLS session.
  const std::vector<uint8_t>& binding() const noexcept { return binding_; }

  /// Once ready: bytes the peer sent after its last handshake message, already records.
  std::vector<uint8_t> take_early_records() { return std::move(early_); }

  tls_sealer& sealer() noexcept { return *sealer_; }
  tls_opener& opener() noexcept { return *opener_; }

  /// "TLS 1.3 TLS_AES_128_GCM_SHA256, pre-shared key" and the like, once ready.
  const std::string& description() const noexcept { return description_; }

  /// OpenSSL's key log callback of `tls_context`: hands a link its traffic secrets.
  static void on_keylog(const SSL* ssl, const char* line);

private:
  result<void> finish();
  void drain_output();

  std::shared_ptr<const tls_context> ctx_;
  bool server_;
  SSL* ssl_ = nullptr;
  BIO* in_ = nullptr;      // what the peer sent, for OpenSSL to read
  BIO* out_bio_ = nullptr; // what OpenSSL wrote, for this side to send
  std::vector<uint8_t> out_;
  std::vector<uint8_t> early_;
  std::vector<uint8_t> binding_;
  std::string client_secret_; // hex, from OpenSSL's key log
  std::string server_secret_;
  std::string description_;
  std::unique_ptr<tls_sealer> sealer_;
  std::unique_ptr<tls_opener> opener_;
};

} // namespace swarm::wire_msg
