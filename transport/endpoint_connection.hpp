#pragma once

// The endpoint's connection: its socket, handshake, decoder and queued frames. Seen only
// by endpoint.cpp; the fields say which thread or lock guards them.

#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

#include "transport/endpoint.hpp"
#include "transport/handshake.hpp"
#include "transport/tls_link.hpp"
#include "transport/wire_codec.hpp"

namespace swarm::wire_msg {

struct endpoint::connection : std::enable_shared_from_this<endpoint::connection> {
  enum class phase { handshaking, up, closed };

  // `acceptor_address`: what the initiator dialled; the accepted socket's own address.
  connection(int f, std::string where, handshake::role r, std::string acceptor_address,
             const endpoint_config& cfg, bool for_bulk = false)
      : fd(f), remote(std::move(where)), accepted(r == handshake::role::acceptor),
        hs(r, cfg.name, cfg.secret, std::move(acceptor_address), for_bulk),
        decoder(cfg.pre_auth_frame_bytes), opened(std::chrono::steady_clock::now()) {
    // Until the peer proves the secret: small frames, one at a time.
    decoder.set_limits(cfg.pre_auth_frame_bytes, 1);
  }

  int fd;
  std::string remote;
  bool accepted;
  // The peer a dial on a send expects here; empty for accepted and waited-for ones.
  std::string dialled_for;
  handshake hs;          // I/O thread only
  frame_decoder decoder; // I/O thread only
  // The decoder's held bytes, as the I/O thread last saw them.
  std::atomic<size_t> read_buffer_bytes{0};
  clock_type::time_point opened;
  // When bytes last arrived (steady clock ticks); written by the I/O thread.
  std::atomic<clock_type::rep> last_received{opened.time_since_epoch().count()};
  // When a frame was last queued or written to it (steady clock ticks).
  std::atomic<clock_type::rep> last_sent{opened.time_since_epoch().count()};
  // Set by the main I/O thread once a bulk connection is authenticated and handed over:
  // from then on only the bulk I/O thread reads it.
  std::atomic<bool> on_bulk_loop{false};
  // It was in a poll of its I/O thread since it was accepted: what it sent was read.
  std::atomic<bool> polled{false};
  // Guarded by the endpoint's mutex.
  phase state = phase::handshaking;
  std::string peer;
  std::string closed_because;
  // Guarded by send_mtx.
  std::mutex send_mtx;
  std::array<std::deque<frame_parts>, 3> queued;
  frame_parts current; // being written when its size is not 0
  size_t current_off = 0;
  bool connecting = false; // its non-blocking connect has not ended: nothing written
  bool broken = false;
  // Out of use as idle (`endpoint::retire`): takes no more frames; once what it holds is
  // written, its writing side is shut.
  bool retiring = false;
  bool shut = false;
  bool peer_shut = false; // the peer shut its side while this one still had frames
  clock_type::time_point retired_at;
  std::string broken_because;
  // TLS 1.3 on this connection: its handshake, sealing and output under send_mtx, its
  // opening on the I/O thread that reads it. Null in the clear.
  std::unique_ptr<tls_link> tls;
  frame_parts tls_out; // its handshake's bytes to write, ahead of any frame
  size_t tls_out_off = 0;
  // Accepted from a loopback peer that may speak TLS or not: nothing is written until
  // its first byte says which.
  bool tls_undecided = false;

  // Frames cannot be written yet: the socket's connect, or TLS, is not through.
  bool held_locked() const {
    return connecting || tls_undecided || (tls && !tls->ready());
  }
  bool pending_locked() const {
    return held_locked() || current.size() != 0 || !queued[0].empty() ||
           !queued[1].empty() || !queued[2].empty();
  }
  // Whether the socket's being writable matters now (EPOLLOUT).
  bool wants_write_locked() const {
    if (connecting) return true;
    if (tls_out_off < tls_out.size()) return true;
    return !held_locked() && pending_locked();
  }
  // Takes what `tls` made to send (its handshake's bytes).
  void take_tls_output_locked() {
    auto& out = tls->output();
    tls_out.bytes.insert(tls_out.bytes.end(), out.begin(), out.end());
    out.clear();
  }
  // `f` becomes the frame being written, sealed into records under TLS.
  void start_locked(frame_parts&& f) {
    current = tls ? tls->sealer().seal(f) : std::move(f);
    current_off = 0;
  }
};

} // namespace swarm::wire_msg
