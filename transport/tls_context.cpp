#include "transport/tls_context.hpp"

#include <openssl/err.h>
#include <openssl/hmac.h>

#include <cstring>

#include "transport/tls_link.hpp"

namespace swarm::wire_msg {

namespace {

// Both ends name the one key they hold.
constexpr char psk_identity[] = "swarm-cluster-secret";
constexpr unsigned char aes_128_gcm_sha256[] = {0x13, 0x01};

const tls_context& context_of(SSL* ssl) {
  return *static_cast<const tls_context*>(SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl)));
}

SSL_SESSION* psk_session(SSL* ssl) {
  const auto& key = context_of(ssl).psk();
  const SSL_CIPHER* cipher = SSL_CIPHER_find(ssl, aes_128_gcm_sha256);
  SSL_SESSION* s = cipher != nullptr ? SSL_SESSION_new() : nullptr;
  if (s == nullptr) return nullptr;
  if (SSL_SESSION_set1_master_key(s, key.data(), key.size()) != 1 ||
      SSL_SESSION_set_cipher(s, cipher) != 1 ||
      SSL_SESSION_set_protocol_version(s, TLS1_3_VERSION) != 1) {
    SSL_SESSION_free(s);
    return nullptr;
  }
  return s;
}

int use_psk(SSL* ssl, const EVP_MD* md, const unsigned char** id, size_t* id_len,
            SSL_SESSION** sess) {
  *sess = nullptr;
  *id = nullptr;
  *id_len = 0;
  // After a HelloRetryRequest for another hash, no key fits.
  if (md != nullptr && md != EVP_sha256()) return 1;
  *sess = psk_session(ssl);
  if (*sess == nullptr) return 0;
  *id = reinterpret_cast<const unsigned char*>(psk_identity);
  *id_len = sizeof(psk_identity) - 1;
  return 1;
}

int find_psk(SSL* ssl, const unsigned char* id, size_t id_len, SSL_SESSION** sess) {
  *sess = nullptr;
  if (id_len != sizeof(psk_identity) - 1 || std::memcmp(id, psk_identity, id_len) != 0)
    return 1; // not ours: the handshake fails for want of a key
  *sess = psk_session(ssl);
  return *sess != nullptr ? 1 : 0;
}

} // namespace

std::string tls_errors(const std::string& fallback) {
  std::string out;
  while (auto e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    if (!out.empty()) out += "; ";
    // "error:0A000410:SSL routines::sslv3 alert handshake failure": the reason only.
    const char* reason = std::strrchr(buf, ':');
    out += reason != nullptr ? reason + 1 : buf;
  }
  return out.empty() ? fallback : out;
}

result<std::shared_ptr<const tls_context>> tls_context::make(const tls_options& o,
                                                             const std::string& secret) {
  std::shared_ptr<tls_context> ctx{new tls_context()};
  ctx->options_ = o;
  if (!o.certificates()) {
    if (!o.key.empty() || !o.ca.empty())
      return error{
          errc::invalid_argument,
          "[tls] key and ca need cert: give all three, or none for a key derived "
          "from the cluster secret"};
    if (secret.empty())
      return error{errc::invalid_argument,
                   "TLS with a pre-shared key needs the cluster secret"};
    static constexpr char label[] = "swarm TLS 1.3 pre-shared key";
    uint8_t key[32];
    unsigned int len = 0;
    HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
         reinterpret_cast<const unsigned char*>(label), sizeof(label) - 1, key, &len);
    ctx->psk_.assign(key, key + len);
  } else if (o.key.empty() || o.ca.empty()) {
    return error{errc::invalid_argument,
                 std::string{"[tls] cert needs "} + (o.key.empty() ? "key" : "ca") +
                     " too: this node's private key and the authority that signs every "
                     "node's certificate"};
  }
  ERR_clear_error();
  ctx->client_ = SSL_CTX_new(TLS_client_method());
  ctx->server_ = SSL_CTX_new(TLS_server_method());
  if (ctx->client_ == nullptr || ctx->server_ == nullptr)
    return error{errc::io_error, tls_errors("OpenSSL could not make a TLS context")};
  if (auto ok = ctx->setup(ctx->client_, false); !ok) return ok.err();
  if (auto ok = ctx->setup(ctx->server_, true); !ok) return ok.err();
  return std::shared_ptr<const tls_context>{std::move(ctx)};
}

result<void> tls_context::setup(SSL_CTX* c, bool server) {
  SSL_CTX_set_app_data(c, this);
  SSL_CTX_set_min_proto_version(c, TLS1_3_VERSION);
  SSL_CTX_set_max_proto_version(c, TLS1_3_VERSION);
  SSL_CTX_set_options(c, SSL_OP_NO_TICKET);
  SSL_CTX_clear_options(c, SSL_OP_ENABLE_MIDDLEBOX_COMPAT);
  SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_OFF);
  if (server) SSL_CTX_set_num_tickets(c, 0);
  SSL_CTX_set_keylog_callback(c, &tls_link::on_keylog);
  // The suites the record layer seals; a pre-shared key is bound to SHA-256.
  if (SSL_CTX_set_ciphersuites(c, psk_.empty()
                                      ? "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384"
                                      : "TLS_AES_128_GCM_SHA256") != 1)
    return error{errc::io_error, tls_errors("the TLS cipher suites were refused")};
  if (!psk_.empty()) {
    if (server)
      SSL_CTX_set_psk_find_session_callback(c, &find_psk);
    else
      SSL_CTX_set_psk_use_session_callback(c, &use_psk);
    return {};
  }
  auto file_error = [](const char* key, const std::string& path) {
    return error{errc::invalid_argument, std::string{"[tls] "} + key + " '" + path +
                                             "': " + tls_errors("cannot be read")};
  };
  if (SSL_CTX_use_certificate_chain_file(c, options_.cert.c_str()) != 1)
    return file_error("cert", options_.cert);
  if (SSL_CTX_use_PrivateKey_file(c, options_.key.c_str(), SSL_FILETYPE_PEM) != 1)
    return file_error("key", options_.key);
  if (SSL_CTX_check_private_key(c) != 1)
    return error{errc::invalid_argument, "[tls] key '" + options_.key +
                                             "' is not the key of cert '" +
                                             options_.cert + "'"};
  if (SSL_CTX_load_verify_locations(c, options_.ca.c_str(), nullptr) != 1)
    return file_error("ca", options_.ca);
  // Both ends show a certificate the authority signed.
  SSL_CTX_set_verify(c, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  return {};
}

tls_context::~tls_context() {
  SSL_CTX_free(client_);
  SSL_CTX_free(server_);
}

} // namespace swarm::wire_msg
