#include "transport/tls_link.hpp"

#include <openssl/crypto.h>
#include <openssl/err.h>

#include <cstring>
#include <stdexcept>

namespace swarm::wire_msg {

namespace {

constexpr char exporter_label[] = "EXPORTER-swarm-proof";

std::vector<uint8_t> from_hex(const std::string& hex) {
  std::vector<uint8_t> out;
  auto nibble = [](char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<uint8_t>(nibble(hex[i]) << 4 | nibble(hex[i + 1])));
  return out;
}

} // namespace

tls_link::tls_link(std::shared_ptr<const tls_context> ctx, bool server)
    : ctx_(std::move(ctx)), server_(server) {
  ssl_ = SSL_new(server ? ctx_->server() : ctx_->client());
  in_ = BIO_new(BIO_s_mem());
  out_bio_ = BIO_new(BIO_s_mem());
  if (ssl_ == nullptr || in_ == nullptr || out_bio_ == nullptr) {
    BIO_free(in_);
    BIO_free(out_bio_);
    SSL_free(ssl_);
    throw std::bad_alloc{};
  }
  // An empty input means "wait for more", not the end of the stream.
  BIO_set_mem_eof_return(in_, -1);
  SSL_set_bio(ssl_, in_, out_bio_);
  SSL_set_app_data(ssl_, this);
  if (server) {
    SSL_set_accept_state(ssl_);
  } else {
    SSL_set_connect_state(ssl_);
    (void)handshake(nullptr, 0); // the ClientHello; a failure shows on the next step
  }
}

tls_link::~tls_link() {
  SSL_free(ssl_);
}

void tls_link::on_keylog(const SSL* ssl, const char* line) {
  auto* self = static_cast<tls_link*>(SSL_get_app_data(ssl));
  if (self == nullptr) return;
  // "<LABEL> <client random> <secret>", all hex but the label.
  std::string text{line};
  auto a = text.find(' ');
  auto b = a == std::string::npos ? a : text.find(' ', a + 1);
  if (b == std::string::npos) return;
  auto label = text.substr(0, a);
  if (label == "CLIENT_TRAFFIC_SECRET_0")
    self->client_secret_ = text.substr(b + 1);
  else if (label == "SERVER_TRAFFIC_SECRET_0")
    self->server_secret_ = text.substr(b + 1);
}

void tls_link::drain_output() {
  char buf[4096];
  int n = 0;
  while ((n = BIO_read(out_bio_, buf, sizeof(buf))) > 0)
    out_.insert(out_.end(), buf, buf + n);
}

result<bool> tls_link::handshake(const uint8_t* data, size_t n) {
  if (ready()) return true;
  if (ssl_ == nullptr)
    return error{errc::node_unreachable, "TLS handshake failed earlier"};
  ERR_clear_error();
  if (n > 0 && BIO_write(in_, data, static_cast<int>(n)) != static_cast<int>(n))
    return error{errc::io_error, "TLS: the handshake's input could not be buffered"};
  int r = SSL_do_handshake(ssl_);
  drain_output();
  if (r == 1) {
    if (auto ok = finish(); !ok) return ok.err();
    return true;
  }
  int e = SSL_get_error(ssl_, r);
  if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) return false;
  return error{
      errc::node_unreachable,
      "the TLS handshake failed: " + tls_errors("no reason given") +
          (ctx_->psk().empty()
               ? " (is the peer's certificate signed by [tls] ca, and TLS on there?)"
               : " (does the peer hold this cluster secret, with TLS on?)")};
}

result<void> tls_link::finish() {
  const SSL_CIPHER* cipher = SSL_get_current_cipher(ssl_);
  auto suite = tls_suite::of(cipher != nullptr ? SSL_CIPHER_get_protocol_id(cipher) : 0);
  if (!suite) return suite.err();
  if (client_secret_.empty() || server_secret_.empty())
    return error{errc::io_error,
                 "TLS: the handshake's traffic secrets were not handed over"};
  binding_.resize(32);
  if (SSL_export_keying_material(ssl_, binding_.data(), binding_.size(), exporter_label,
                                 sizeof(exporter_label) - 1, nullptr, 0, 0) != 1)
    return error{errc::io_error, tls_errors("TLS: no exporter value")};
  auto mine = from_hex(server_ ? server_secret_ : client_secret_);
  auto theirs = from_hex(server_ ? client_secret_ : server_secret_);
  sealer_ = std::make_unique<tls_sealer>(*suite, std::move(mine));
  opener_ = std::make_unique<tls_opener>(*suite, std::move(theirs));
  // What followed the peer's last handshake message is records already.
  early_.resize(BIO_ctrl_pending(in_));
  if (!early_.empty()) BIO_read(in_, early_.data(), static_cast<int>(early_.size()));
  description_ = std::string{"TLS 1.3 "} + suite->name +
                 (ctx_->psk().empty() ? ", certificates" : ", pre-shared key");
  for (auto* s : {&client_secret_, &server_secret_}) {
    OPENSSL_cleanse(s->data(), s->size());
    s->clear();
  }
  SSL_free(ssl_); // its buffers too; the records need nothing more from it
  ssl_ = nullptr;
  return {};
}

} // namespace swarm::wire_msg
