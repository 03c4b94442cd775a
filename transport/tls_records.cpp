#include "transport/tls_records.hpp"

#include <openssl/hmac.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace swarm::wire_msg {

namespace {

constexpr uint8_t type_alert = 21;
constexpr uint8_t type_handshake = 22;
constexpr uint8_t type_application_data = 23;
constexpr uint8_t handshake_key_update = 24;
// A record's ciphertext: inner plaintext plus one content type byte and the tag, and up
// to 255 bytes of padding a peer may add (RFC 8446 §5.2).
constexpr size_t max_ciphertext = tls_max_plaintext + 256;

const char* alert_name(uint8_t d) {
  switch (d) {
  case 0:
    return "close_notify";
  case 10:
    return "unexpected_message";
  case 20:
    return "bad_record_mac";
  case 22:
    return "record_overflow";
  case 40:
    return "handshake_failure";
  case 80:
    return "internal_error";
  case 90:
    return "user_canceled";
  default:
    return "alert";
  }
}

} // namespace

result<tls_suite> tls_suite::of(uint16_t id) {
  switch (id) {
  case 0x1301:
    return tls_suite{EVP_aes_128_gcm(), EVP_sha256(), 16, "TLS_AES_128_GCM_SHA256"};
  case 0x1302:
    return tls_suite{EVP_aes_256_gcm(), EVP_sha384(), 32, "TLS_AES_256_GCM_SHA384"};
  default:
    return error{errc::invalid_argument,
                 "TLS cipher suite 0x" + std::to_string(id) + " is not one Swarm seals"};
  }
}

std::vector<uint8_t> hkdf_expand_label(const tls_suite& s,
                                       const std::vector<uint8_t>& secret,
                                       const std::string& label, size_t length) {
  // HkdfLabel: u16 length, "tls13 " + label (u8 length-prefixed), empty context; one
  // HMAC block is enough for lengths up to the hash's size.
  std::string full = "tls13 " + label;
  std::vector<uint8_t> info{static_cast<uint8_t>(length >> 8),
                            static_cast<uint8_t>(length),
                            static_cast<uint8_t>(full.size())};
  info.insert(info.end(), full.begin(), full.end());
  info.push_back(0);
  info.push_back(1);
  uint8_t out[EVP_MAX_MD_SIZE];
  unsigned int out_len = 0;
  HMAC(s.md, secret.data(), static_cast<int>(secret.size()), info.data(), info.size(),
       out, &out_len);
  if (length > out_len)
    throw std::logic_error{"hkdf_expand_label: length over one block"};
  return {out, out + length};
}

tls_direction::tls_direction(const tls_suite& s, std::vector<uint8_t> secret)
    : suite_(s), secret_(std::move(secret)), ctx_(EVP_CIPHER_CTX_new()) {
  if (ctx_ == nullptr) throw std::bad_alloc{};
}

tls_direction::~tls_direction() {
  EVP_CIPHER_CTX_free(ctx_);
}

void tls_direction::set_key() {
  auto key = hkdf_expand_label(suite_, secret_, "key", suite_.key_bytes);
  iv_ = hkdf_expand_label(suite_, secret_, "iv", 12);
  seq_ = 0;
  if (EVP_CipherInit_ex(ctx_, suite_.cipher, nullptr, key.data(), nullptr, encrypt_) != 1)
    throw std::runtime_error{"TLS: the record cipher could not be set up"};
}

void tls_direction::next_nonce(uint8_t out[12]) {
  std::memcpy(out, iv_.data(), 12);
  for (int i = 0; i < 8; ++i)
    out[11 - i] ^= static_cast<uint8_t>(seq_ >> (8 * i));
  ++seq_;
}

void tls_direction::update() {
  secret_ = hkdf_expand_label(suite_, secret_, "traffic upd", EVP_MD_get_size(suite_.md));
  set_key();
}

tls_sealer::tls_sealer(const tls_suite& s, std::vector<uint8_t> secret,
                       uint64_t records_per_key)
    : tls_direction(s, std::move(secret)),
      records_per_key_(std::max<uint64_t>(1, records_per_key)) {
  encrypt_ = true;
  set_key();
}

size_t tls_sealer::seal_record(uint8_t* out, uint8_t type, const span* spans,
                               size_t count) {
  size_t n = 0;
  for (size_t i = 0; i < count; ++i)
    n += spans[i].n;
  size_t body = n + 1 + 16;
  out[0] = type_application_data;
  out[1] = 3;
  out[2] = 3;
  out[3] = static_cast<uint8_t>(body >> 8);
  out[4] = static_cast<uint8_t>(body);
  uint8_t nonce[12];
  next_nonce(nonce);
  uint8_t* dst = out + tls_record_header;
  int len = 0;
  EVP_EncryptInit_ex(ctx_, nullptr, nullptr, nullptr, nonce);
  EVP_EncryptUpdate(ctx_, nullptr, &len, out, static_cast<int>(tls_record_header));
  // Encrypted from where the bytes are, straight into the record.
  for (size_t i = 0; i < count; ++i) {
    EVP_EncryptUpdate(ctx_, dst, &len, spans[i].p, static_cast<int>(spans[i].n));
    dst += len;
  }
  EVP_EncryptUpdate(ctx_, dst, &len, &type, 1);
  dst += len;
  EVP_EncryptFinal_ex(ctx_, dst, &len);
  dst += len;
  EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_GCM_GET_TAG, 16, dst);
  return tls_record_header + body;
}

frame_parts tls_sealer::seal(const frame_parts& plain) {
  // The frame as three pieces: its bytes, its tail, its zero padding.
  static constexpr uint8_t zeros[8] = {};
  span pieces[3] = {{plain.bytes.data(), plain.bytes.size()},
                    {plain.tail, plain.tail_size},
                    {zeros, plain.pad}};
  size_t total = plain.size();
  size_t records = (total + tls_max_plaintext - 1) / tls_max_plaintext;
  // Room for the key updates too. Not a vector: nothing to zero before it is written.
  size_t updates = records / records_per_key_ + 1;
  size_t cap =
      total + records * tls_record_overhead + updates * (tls_record_overhead + 5);
  std::shared_ptr<uint8_t[]> buf{new uint8_t[cap]};
  size_t used = 0, which = 0, off = 0;
  for (size_t left = total; left > 0;) {
    if (seq_ >= records_per_key_) {
      // KeyUpdate, update_not_requested: the peer moves to the next secret too.
      static constexpr uint8_t key_update[5] = {handshake_key_update, 0, 0, 1, 0};
      span ku{key_update, sizeof(key_update)};
      used += seal_record(buf.get() + used, type_handshake, &ku, 1);
      update();
    }
    size_t n = std::min(left, tls_max_plaintext);
    span spans[3];
    size_t count = 0;
    for (size_t want = n; want > 0;) {
      if (off == pieces[which].n) {
        ++which;
        off = 0;
        continue;
      }
      size_t k = std::min(want, pieces[which].n - off);
      spans[count++] = {pieces[which].p + off, k};
      off += k;
      want -= k;
    }
    used += seal_record(buf.get() + used, type_application_data, spans, count);
    left -= n;
  }
  frame_parts out;
  out.tail = buf.get();
  out.tail_size = used;
  out.keep = std::move(buf);
  return out;
}

tls_opener::tls_opener(const tls_suite& s, std::vector<uint8_t> secret)
    : tls_direction(s, std::move(secret)), plain_(max_ciphertext) {
  encrypt_ = false;
  set_key();
}

std::pair<uint8_t*, size_t> tls_opener::prepare(size_t want) {
  if (pos_ > 0 && (pos_ == size_ || buf_.size() - size_ < want)) {
    std::memmove(buf_.data(), buf_.data() + pos_, size_ - pos_);
    size_ -= pos_;
    pos_ = 0;
  }
  if (buf_.size() - size_ < want) buf_.resize(size_ + want);
  return {buf_.data() + size_, buf_.size() - size_};
}

result<void> tls_opener::commit(size_t n, const room_fn& room, const sink_fn& sink) {
  size_ += n;
  while (size_ - pos_ >= tls_record_header) {
    const uint8_t* head = buf_.data() + pos_;
    size_t len = (size_t{head[3]} << 8) | head[4];
    if (head[0] != type_application_data)
      return error{errc::invalid_argument,
                   "a TLS record of outer type " + std::to_string(head[0]) +
                       " after the handshake (only application data may follow it)"};
    if (len > max_ciphertext || len < 17)
      return error{errc::invalid_argument,
                   "a TLS record of " + std::to_string(len) + " bytes (record_overflow)"};
    if (size_ - pos_ < tls_record_header + len) break;
    pos_ += tls_record_header + len;
    bool go_on = true;
    if (auto ok = open_record(head, len, room, sink, go_on); !ok) return ok;
    if (!go_on) break;
  }
  return {};
}

result<void> tls_opener::open_record(const uint8_t* rec, size_t len, const room_fn& room,
                                     const sink_fn& sink, bool& go_on) {
  uint8_t nonce[12];
  next_nonce(nonce);
  size_t body = len - 16;
  // Opened where it goes when it fits there (it is not handed over before its check).
  auto [at, cap] = room(body);
  bool in_room = at != nullptr && cap >= body;
  uint8_t* plain = in_room ? at : plain_.data();
  int out = 0;
  EVP_DecryptInit_ex(ctx_, nullptr, nullptr, nullptr, nonce);
  EVP_DecryptUpdate(ctx_, nullptr, &out, rec, static_cast<int>(tls_record_header));
  EVP_DecryptUpdate(ctx_, plain, &out, rec + tls_record_header, static_cast<int>(body));
  EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_GCM_SET_TAG, 16,
                      const_cast<uint8_t*>(rec + tls_record_header + body));
  if (EVP_DecryptFinal_ex(ctx_, plain + body, &out) != 1)
    return error{
        errc::invalid_argument,
        "a TLS record failed its integrity check (bad_record_mac): changed on the "
        "way, or not from the peer that made the handshake"};
  // The inner content type is the last byte that is not padding.
  size_t n = body;
  while (n > 0 && plain[n - 1] == 0)
    --n;
  if (n == 0) return error{errc::invalid_argument, "a TLS record with no content type"};
  uint8_t type = plain[--n];
  switch (type) {
  case type_application_data:
    if (n > tls_max_plaintext)
      return error{errc::invalid_argument,
                   "a TLS record over 2^14 bytes (record_overflow)"};
    go_on = sink(plain, n, in_room);
    return {};
  case type_handshake:
    return on_handshake_message(plain, n);
  case type_alert:
    return error{errc::node_unreachable,
                 std::string{"the peer sent the TLS alert "} +
                     (n >= 2 ? alert_name(plain[1]) : "(malformed)")};
  default:
    return error{errc::invalid_argument,
                 "a TLS record of inner type " + std::to_string(type)};
  }
}

result<void> tls_opener::on_handshake_message(const uint8_t* p, size_t n) {
  if (n == 5 && p[0] == handshake_key_update && p[1] == 0 && p[2] == 0 && p[3] == 1) {
    if (p[4] != 0)
      return error{
          errc::invalid_argument,
          "the peer asked for a TLS key update in return, which Swarm's links do "
          "not answer"};
    update();
    return {};
  }
  return error{errc::invalid_argument,
               "a TLS handshake message of type " + std::to_string(n > 0 ? p[0] : 0) +
                   " after the handshake (Swarm's links take only key updates)"};
}

} // namespace swarm::wire_msg
