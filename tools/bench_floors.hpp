#pragma once

// Cross-process floors for `swarm bench --nodes 2`: bare TCP and bare CAF between this
// process and a child process, a re-execution of this binary as `swarm floor-peer ...`
// (`run_floor_peer` in tools/command.hpp). Every wait on the child is bounded: a child
// that does not answer within 10 s makes these functions throw std::runtime_error. The
// child is always killed and reaped before they return or throw. Only 127.0.0.1 is used.

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace swarm::tools {

/// Bare TCP ping-pong between this process and a child process on 127.0.0.1: after a
/// short untimed warm-up, `n` sequential round trips of `msg_bytes`-byte messages (each
/// side reads the full message, then writes it back), with TCP_NODELAY on both sides.
/// Returns each round trip in microseconds. Stops early after `cap`.
std::vector<double> tcp_floor_round_trips(size_t msg_bytes, size_t n,
                                          std::chrono::milliseconds cap);

/// Where the reader of a bare TCP stream puts the bytes.
enum class stream_into {
  /// One 1 MiB buffer, read over and over: it stays in the cache.
  cache,
  /// Each read at its offset in one buffer of all the bytes, allocated and faulted in
  /// before the clock starts (a pull into kept memory).
  ready_buffer,
  /// The same in a buffer allocated when the clock starts, whose pages the reads fault
  /// in (a pull into fresh memory).
  fresh_buffer,
};

/// A bare TCP stream of `bytes` from a child process to this one (a plain loop of
/// write()/read() with 1 MiB buffers); GB/s (1e9 bytes/s) measured from the first byte
/// requested to the last byte received.
double tcp_stream_gigabytes(size_t bytes, stream_into into = stream_into::cache);

/// Bare CAF remote request/response (io middleman, BASP) between this process and a child
/// process: the child publishes an actor that replies with its int argument; after a
/// short untimed warm-up, this process makes `n` sequential blocking requests from a
/// `scoped_actor`. Returns each round trip in microseconds. Stops early after `cap`.
std::vector<double> caf_remote_round_trips(size_t n, std::chrono::milliseconds cap);

/// Starts this binary as `swarm ARGS...` in a child process; it is killed and reaped when
/// the last copy of the returned handle goes.
std::shared_ptr<void> start_self(const std::vector<std::string>& args);

/// Whether the child `start_self` returned has exited (it is reaped if so).
bool self_exited(const std::shared_ptr<void>& child);

} // namespace swarm::tools
