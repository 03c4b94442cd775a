#include "transport/endpoint.hpp"

// TLS on the endpoint's connections: which ones, the handshake read on the I/O thread,
// and records opened into the frame decoder.

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "transport/endpoint_connection.hpp"
#include "transport/endpoint_sockets.hpp"

namespace swarm::wire_msg {

using namespace endpoint_sockets;

namespace {

// The first byte of a TLS handshake record; a frame's first byte is a multiple of 8.
constexpr uint8_t tls_handshake_record = 0x16;

} // namespace

void endpoint::secure(connection& c) {
  auto host = host_of(c.remote);
  if (tls_ && tls_required(cfg_.tls.use, host)) {
    c.tls = std::make_unique<tls_link>(tls_, c.accepted);
    c.take_tls_output_locked(); // a dialling side's first flight
  } else if (c.accepted) {
    // A peer that TLS need not cover says by its first byte whether it speaks it (or,
    // with TLS off here, is told why it is refused).
    c.tls_undecided = true;
  }
}

bool endpoint::decide_tls(const conn_ptr& c) {
  uint8_t first = 0;
  auto n = ::recv(c->fd, &first, 1, MSG_PEEK);
  if (n == 0) {
    close(c, std::string{peer_closed});
    return false;
  }
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return false;
    close(c, sys_error("read failed"));
    return false;
  }
  bool speaks_tls = first == tls_handshake_record;
  if (speaks_tls && !tls_) {
    close(c, "the peer began a TLS handshake, and TLS is off on this node ([tls] mode = "
             "\"off\")");
    return false;
  }
  {
    std::lock_guard<std::mutex> guard{c->send_mtx};
    c->tls_undecided = false;
    if (speaks_tls) c->tls = std::make_unique<tls_link>(tls_, true);
    flush_locked(*c);
  }
  attend(*c);
  return true;
}

bool endpoint::tls_handshake(const conn_ptr& c) {
  uint8_t buf[tls_max_plaintext];
  ssize_t n = 0;
  do {
    n = ::recv(c->fd, buf, sizeof(buf), 0);
  } while (n < 0 && errno == EINTR);
  if (n == 0) {
    close(c, "the peer closed the connection during the TLS handshake (does it hold this "
             "cluster's secret and TLS settings?)");
    return false;
  }
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return false;
    close(c, sys_error("read failed during the TLS handshake"));
    return false;
  }
  c->last_received.store(clock_type::now().time_since_epoch().count(),
                         std::memory_order_relaxed);
  result<bool> through = false;
  std::vector<uint8_t> early;
  {
    std::lock_guard<std::mutex> guard{c->send_mtx};
    through = c->tls->handshake(buf, static_cast<size_t>(n));
    c->take_tls_output_locked();
    if (through && *through) early = c->tls->take_early_records();
    flush_locked(*c);
  }
  if (!through) {
    close(c, through.err().message);
    return false;
  }
  attend(*c);
  if (!*through) return false;
  // Swarm's own proof of the secret covers this TLS session.
  c->hs.bind(c->tls->binding());
  log(log_level::debug, c->tls->description() + " with " + c->remote);
  if (early.empty()) return true;
  auto [room, cap] = c->tls->opener().prepare(early.size());
  std::memcpy(room, early.data(), std::min(cap, early.size()));
  std::vector<message> msgs;
  return open_records(c, early.size(), msgs);
}

bool endpoint::open_records(const conn_ptr& c, size_t n, std::vector<message>& msgs) {
  bool open = true;
  auto room = [&](size_t want) { return c->decoder.prepare(want); };
  auto sink = [&](const uint8_t* p, size_t len, bool in_room) {
    if (in_room) {
      msgs.clear();
      return open = deliver(c, c->decoder.commit(len, msgs), msgs);
    }
    // Opened aside (it did not fit the decoder's room): copied in, room by room.
    while (len > 0 && open) {
      auto [at, cap] = c->decoder.prepare(len);
      size_t k = std::min(cap, len);
      std::memcpy(at, p, k);
      msgs.clear();
      open = deliver(c, c->decoder.commit(k, msgs), msgs);
      p += k;
      len -= k;
    }
    return open;
  };
  auto ok = c->tls->opener().commit(n, room, sink);
  if (!open) return false;
  if (!ok) {
    close(c, "TLS: " + ok.err().message);
    return false;
  }
  return true;
}

} // namespace swarm::wire_msg
