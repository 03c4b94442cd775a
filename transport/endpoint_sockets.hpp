#pragma once

// What the endpoint's source files share (endpoint.cpp, endpoint_dial.cpp,
// endpoint_idle.cpp, endpoint_loop.cpp): socket calls and the reasons a connection
// closes. Seen only by them.

#include <netinet/in.h>
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "base/result.hpp"
#include "transport/wire_codec.hpp"

namespace swarm::wire_msg::endpoint_sockets {

using clock_type = std::chrono::steady_clock;

inline constexpr size_t read_chunk = 256 << 10;
// What a connection's reader holds undecoded while its socket has more: urgent frames
// among those bytes are decoded first (`frame_decoder::set_urgent_ahead`).
inline constexpr size_t read_ahead = 4 << 20;

// Reasons a connection closes, which set the level its line is logged at.
inline constexpr std::string_view peer_closed = "the peer closed the connection";
inline constexpr std::string_view bad_frame = "bad frame: ";
// Why unproven connections are closed for the handshaking cap.
inline constexpr std::string_view crowded_out = "nothing sent within";
inline constexpr std::string_view make_room =
    "closed to make room for a connection from ";

// `what`, then errno's text.
std::string sys_error(const char* what);

// Sets the options every connection has: no Nagle, and (`unacked` > 0) closed by the
// kernel once what it sent stays unacknowledged that long.
void tune(int fd, std::chrono::milliseconds unacked);

// Lifts `tune`'s bound on unacknowledged bytes: the system's default holds again.
void unbound_unacked(int fd);

std::string peer_address(const sockaddr_in& a);

// The address a peer dialled to reach this accepted socket.
std::string local_address(int fd);

result<sockaddr_in> make_address(const std::string& host, uint16_t port);

// Writes `f` from byte `off` on with one sendmsg; what ::sendmsg returns.
ssize_t send_from(int fd, const frame_parts& f, size_t off);

// A non-blocking socket connecting to `address:port`, and whether its connect ended
// already (it may on loopback).
result<std::pair<int, bool>> start_connect(const std::string& address, uint16_t port);

// The host and the port of an "address:port".
std::string host_of(const std::string& remote);
uint16_t port_of(const std::string& remote);

// Whether the connection on `fd` sent nothing yet: no bytes read from it (`last_received`
// is still when it was `opened`), and none waiting to be.
bool silent(int fd, int64_t last_received, int64_t opened);

} // namespace swarm::wire_msg::endpoint_sockets
