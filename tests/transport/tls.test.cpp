#include <doctest/doctest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/transport/test_certificates.hpp"
#include "transport/tls_link.hpp"

using namespace swarm::wire_msg;
using swarm::test::have_openssl_tool;
using swarm::test::make_certificates;

namespace {

const std::string secret = "0123456789abcdef-the-tls-tests";

std::shared_ptr<const tls_context> context(const std::string& key = secret,
                                           tls_options o = {}) {
  auto c = tls_context::make(o, key);
  REQUIRE_MESSAGE(c.has_value(), (c ? "" : c.err().message));
  return *c;
}

// Moves each side's handshake output to the other until both are done or one fails;
// the first failure, or an empty string.
std::string pump(tls_link& client, tls_link& server) {
  for (int round = 0; round < 8 && !(client.ready() && server.ready()); ++round) {
    auto to_server = std::move(client.output());
    client.output().clear();
    auto s = server.handshake(to_server.data(), to_server.size());
    if (!s) return "server: " + s.err().message;
    auto to_client = std::move(server.output());
    server.output().clear();
    auto c = client.handshake(to_client.data(), to_client.size());
    if (!c) return "client: " + c.err().message;
  }
  return client.ready() && server.ready() ? "" : "the handshake did not end";
}

frame_parts frame_of(size_t n, uint8_t seed) {
  frame_parts f;
  f.bytes.resize(n);
  for (size_t i = 0; i < n; ++i)
    f.bytes[i] = static_cast<uint8_t>(seed + i * 7);
  return f;
}

// The plaintext `opener` makes of `wire`, fed in pieces of `step` bytes: opened in the
// room it is offered when `room_bytes` are enough (records of up to `room_bytes`), else
// aside.
swarm::result<std::vector<uint8_t>> open_all(tls_opener& opener,
                                             const std::vector<uint8_t>& wire,
                                             size_t step = 1000, size_t room_bytes = 0) {
  std::vector<uint8_t> out, room(room_bytes);
  size_t opened_in_room = 0;
  for (size_t at = 0; at < wire.size(); at += step) {
    size_t n = std::min(step, wire.size() - at);
    auto [buf, cap] = opener.prepare(n);
    REQUIRE(cap >= n);
    std::copy(wire.begin() + static_cast<long>(at),
              wire.begin() + static_cast<long>(at + n), buf);
    auto ok = opener.commit(
        n,
        [&](size_t) {
          return std::pair{room.data(), room.size()};
        },
        [&](const uint8_t* p, size_t k, bool in_room) {
          CHECK(in_room == (p == room.data()));
          opened_in_room += in_room;
          out.insert(out.end(), p, p + k);
          return true;
        });
    if (!ok) return ok.err();
  }
  if (room_bytes > tls_max_plaintext + 17) CHECK(opened_in_room > 0);
  return out;
}

std::vector<uint8_t> flat(const frame_parts& f) {
  std::vector<uint8_t> out{f.bytes};
  out.insert(out.end(), f.tail, f.tail + f.tail_size);
  out.resize(out.size() + f.pad);
  return out;
}

} // namespace

TEST_CASE("records sealed by one side open on the other, a frame's tail and padding "
          "included, across key updates") {
  auto suite = *tls_suite::of(0x1301);
  std::vector<uint8_t> key(32, 7);
  tls_sealer sealer{suite, key, 3};
  tls_opener opener{suite, key};
  std::vector<uint8_t> tail(100'003);
  for (size_t i = 0; i < tail.size(); ++i)
    tail[i] = static_cast<uint8_t>(i * 13);
  auto f = frame_of(40, 1);
  f.tail = tail.data();
  f.tail_size = tail.size();
  f.pad = 5;
  std::vector<uint8_t> want, wire;
  for (int i = 0; i < 4; ++i) {
    auto sealed = sealer.seal(f);
    auto bytes = flat(sealed);
    wire.insert(wire.end(), bytes.begin(), bytes.end());
    auto plain = flat(f);
    want.insert(want.end(), plain.begin(), plain.end());
  }
  // 7 records a frame: the key moved on several times.
  CHECK(sealer.sequence() < 4);
  CHECK(wire.size() > want.size());
  auto got = open_all(opener, wire);
  REQUIRE(got.has_value());
  CHECK(*got == want);
  // Opened in the room the receiver offers, when records fit there.
  tls_opener again{suite, key};
  auto in_room = open_all(again, wire, 70'000, tls_max_plaintext + 64);
  REQUIRE(in_room.has_value());
  CHECK(*in_room == want);
}

TEST_CASE("a record changed on the way is refused, naming the integrity check") {
  auto suite = *tls_suite::of(0x1302);
  std::vector<uint8_t> key(48, 9);
  tls_sealer sealer{suite, key};
  tls_opener opener{suite, key};
  auto wire = flat(sealer.seal(frame_of(500, 3)));
  wire[100] ^= 1;
  auto got = open_all(opener, wire);
  REQUIRE_FALSE(got.has_value());
  CHECK(got.err().message.find("bad_record_mac") != std::string::npos);
}

TEST_CASE("two links with the cluster secret make a TLS 1.3 handshake and agree on its "
          "binding") {
  auto ctx = context();
  tls_link client{ctx, false}, server{ctx, true};
  REQUIRE(pump(client, server) == "");
  CHECK(client.binding() == server.binding());
  CHECK(client.binding().size() == 32);
  CHECK(client.description() == "TLS 1.3 TLS_AES_128_GCM_SHA256, pre-shared key");
  auto wire = flat(client.sealer().seal(frame_of(20'000, 5)));
  auto got = open_all(server.opener(), wire);
  REQUIRE(got.has_value());
  CHECK(*got == frame_of(20'000, 5).bytes);
  auto back = flat(server.sealer().seal(frame_of(64, 2)));
  auto got_back = open_all(client.opener(), back);
  REQUIRE(got_back.has_value());
  CHECK(*got_back == frame_of(64, 2).bytes);

  // Another connection with the same key agrees on another binding.
  tls_link c2{ctx, false}, s2{ctx, true};
  REQUIRE(pump(c2, s2) == "");
  CHECK(c2.binding() != client.binding());
}

TEST_CASE("a TLS handshake between holders of different secrets fails on both sides, "
          "naming the secret") {
  auto a = context();
  auto b = context("another-secret-of-another-cluster");
  tls_link client{a, false}, server{b, true};
  auto why = pump(client, server);
  CHECK(why.find("failed") != std::string::npos);
  CHECK(why.find("cluster secret") != std::string::npos);
}

TEST_CASE("the records are TLS 1.3 as OpenSSL reads and writes them, key updates "
          "included") {
  auto ctx = context();
  tls_link server{ctx, true};
  // OpenSSL's own client, with its own record layer.
  SSL* ssl = SSL_new(ctx->client());
  BIO* in = BIO_new(BIO_s_mem());
  BIO* out = BIO_new(BIO_s_mem());
  BIO_set_mem_eof_return(in, -1);
  SSL_set_bio(ssl, in, out);
  SSL_set_connect_state(ssl);
  auto to_server = [&] {
    std::vector<uint8_t> bytes(BIO_ctrl_pending(out));
    if (!bytes.empty()) BIO_read(out, bytes.data(), static_cast<int>(bytes.size()));
    return bytes;
  };
  bool done = false;
  for (int round = 0; round < 8 && !done; ++round) {
    done = SSL_do_handshake(ssl) == 1;
    auto bytes = to_server();
    REQUIRE(server.handshake(bytes.data(), bytes.size()).has_value());
    auto& back = server.output();
    BIO_write(in, back.data(), static_cast<int>(back.size()));
    back.clear();
  }
  REQUIRE(done);
  REQUIRE(server.ready());

  std::string hello = "records from OpenSSL's record layer";
  REQUIRE(SSL_write(ssl, hello.data(), static_cast<int>(hello.size())) > 0);
  auto got = open_all(server.opener(), to_server());
  REQUIRE(got.has_value());
  CHECK(std::string(got->begin(), got->end()) == hello);

  // Ours, read by OpenSSL: a frame of several records across a key update.
  tls_sealer& sealer = server.sealer();
  auto sealed = flat(sealer.seal(frame_of(40'000, 9)));
  BIO_write(in, sealed.data(), static_cast<int>(sealed.size()));
  std::vector<uint8_t> read(40'000);
  size_t have = 0;
  while (have < read.size()) {
    int n = SSL_read(ssl, read.data() + have, static_cast<int>(read.size() - have));
    REQUIRE(n > 0);
    have += static_cast<size_t>(n);
  }
  CHECK(read == frame_of(40'000, 9).bytes);
  SSL_free(ssl);
}

TEST_CASE("links with certificates from one authority make a handshake, and one signed "
          "by another authority is refused") {
  if (!have_openssl_tool()) {
    MESSAGE("skipped: no openssl tool to make certificates with");
    return;
  }
  auto dir = std::filesystem::temp_directory_path() /
             ("swarm-tls-test-" + std::to_string(::getpid()));
  REQUIRE(make_certificates((dir / "one").string(), "authority-one"));
  REQUIRE(make_certificates((dir / "two").string(), "authority-two"));
  auto opts = [&](const std::string& sub) {
    tls_options o;
    o.cert = (dir / sub / "node.pem").string();
    o.key = (dir / sub / "node.key").string();
    o.ca = (dir / sub / "ca.pem").string();
    return o;
  };
  auto one = context(secret, opts("one"));
  auto two = context(secret, opts("two"));
  {
    tls_link client{one, false}, server{one, true};
    REQUIRE(pump(client, server) == "");
    CHECK(client.binding() == server.binding());
    CHECK(server.description().find("certificates") != std::string::npos);
  }
  {
    tls_link client{one, false}, server{two, true};
    auto why = pump(client, server);
    CHECK(why.find("TLS handshake failed") != std::string::npos);
  }
  auto missing = opts("one");
  missing.key = (dir / "nowhere.key").string();
  auto bad = tls_context::make(missing, secret);
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.err().message.find("[tls] key") != std::string::npos);
  auto half = opts("one");
  half.ca.clear();
  auto no_ca = tls_context::make(half, secret);
  REQUIRE_FALSE(no_ca.has_value());
  CHECK(no_ca.err().message.find("[tls] cert needs ca") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("which connections TLS covers follows the mode and the peer's address") {
  using m = tls_options::mode;
  CHECK(tls_required(m::on, "127.0.0.1"));
  CHECK_FALSE(tls_required(m::off, "10.1.2.3"));
  CHECK(tls_required(m::automatic, "10.1.2.3"));
  CHECK_FALSE(tls_required(m::automatic, "127.0.0.1"));
  CHECK_FALSE(tls_required(m::automatic, "127.3.0.9"));
}
