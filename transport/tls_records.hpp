#pragma once

// The record layer of a TLS 1.3 connection once its handshake is done (RFC 8446 §5):
// each direction seals or opens application-data records with AES-GCM under its own
// traffic secret, so the sending side (callers, under a connection's send mutex) and the
// receiving side (its I/O thread) share no state.

#include <openssl/evp.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "transport/wire_codec.hpp"

namespace swarm::wire_msg {

/// The AEAD and hash of a negotiated cipher suite (TLS_AES_128_GCM_SHA256 or
/// TLS_AES_256_GCM_SHA384).
struct tls_suite {
  const EVP_CIPHER* cipher = nullptr;
  const EVP_MD* md = nullptr;
  size_t key_bytes = 0;
  const char* name = "";

  /// The suite with this IANA id (0x1301, 0x1302); none for others.
  static result<tls_suite> of(uint16_t id);
};

/// HKDF-Expand-Label(secret, label, "", length) of RFC 8446 §7.1, `length` at most the
/// hash's size.
std::vector<uint8_t> hkdf_expand_label(const tls_suite& s,
                                       const std::vector<uint8_t>& secret,
                                       const std::string& label, size_t length);

/// Largest plaintext of one record (2^14).
inline constexpr size_t tls_max_plaintext = 16384;
/// A record's header: type, legacy version, length.
inline constexpr size_t tls_record_header = 5;
/// What a record adds to its plaintext: header, inner content type, tag.
inline constexpr size_t tls_record_overhead = tls_record_header + 1 + 16;

// One direction's key, IV and sequence number.
class tls_direction {
public:
  tls_direction(const tls_suite& s, std::vector<uint8_t> secret);
  ~tls_direction();
  tls_direction(const tls_direction&) = delete;
  tls_direction& operator=(const tls_direction&) = delete;

protected:
  // The nonce of the next record, then advances the sequence number.
  void next_nonce(uint8_t out[12]);
  // Moves to the next traffic secret ("traffic upd"), sequence number 0.
  void update();
  void set_key();

  tls_suite suite_;
  std::vector<uint8_t> secret_;
  std::vector<uint8_t> iv_;
  uint64_t seq_ = 0;
  EVP_CIPHER_CTX* ctx_;
  bool encrypt_;
};

/// The sending side: frames become application-data records.
class tls_sealer : public tls_direction {
public:
  /// `records_per_key`: after that many records it sends a KeyUpdate and moves to the
  /// next secret (AES-GCM keys are good for 2^24.5 records).
  tls_sealer(const tls_suite& s, std::vector<uint8_t> secret,
             uint64_t records_per_key = uint64_t{1} << 23);

  /// `plain`'s bytes (its tail and padding included) as records, in one buffer (the
  /// frame's tail), encrypted from where they are in one pass.
  frame_parts seal(const frame_parts& plain);

  /// Records sealed under the current key.
  uint64_t sequence() const noexcept { return seq_; }

private:
  struct span {
    const uint8_t* p;
    size_t n;
  };
  // Writes one record of `type` holding the bytes of `spans` at `out`; its size.
  size_t seal_record(uint8_t* out, uint8_t type, const span* spans, size_t count);
  uint64_t records_per_key_;
};

/// The receiving side: a byte stream of records in, their plaintext out.
class tls_opener : public tls_direction {
public:
  tls_opener(const tls_suite& s, std::vector<uint8_t> secret);

  /// Room for at least `want` more bytes of ciphertext: receive into it, then `commit`.
  std::pair<uint8_t*, size_t> prepare(size_t want);

  /// Where a record's plaintext may be opened: room for at least `want` bytes, or less.
  using room_fn = std::function<std::pair<uint8_t*, size_t>(size_t want)>;
  /// Takes a record's plaintext, at the room's start (`in_room`) or elsewhere; false:
  /// stop.
  using sink_fn = std::function<bool(const uint8_t*, size_t, bool in_room)>;

  /// Takes `n` bytes written into `prepare`'s room and hands the plaintext of every
  /// complete record to `sink`, in order, while it returns true: opened straight into
  /// `room` when it fits there, else in a buffer of its own. Nothing reaches `sink`
  /// before its record passed its integrity check. An error says why a record was
  /// refused (a failed check, an alert from the peer, a record too large or of a kind
  /// Swarm does not take); after one the connection must close.
  result<void> commit(size_t n, const room_fn& room, const sink_fn& sink);

private:
  result<void> open_record(const uint8_t* rec, size_t len, const room_fn& room,
                           const sink_fn& sink, bool& go_on);
  result<void> on_handshake_message(const uint8_t* p, size_t n);

  std::vector<uint8_t> buf_;
  size_t pos_ = 0;
  size_t size_ = 0;
  std::vector<uint8_t> plain_;
};

} // namespace swarm::wire_msg
