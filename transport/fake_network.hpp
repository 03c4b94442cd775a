#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "framework/result.hpp"
#include "transport/handshake.hpp"
#include "transport/wire_codec.hpp"

namespace swarm::wire_msg {

/// Several nodes in one process, for deterministic tests of cross-node protocols. Every
/// message is really encoded into a frame and decoded on arrival (the codec, size limit
/// and handshake run as on a socket), but nothing moves until the test calls `deliver`:
/// time and order are the test's. Per connection, control and call frames overtake bulk
/// ones, as the lanes promise. Counters and a drop hook let tests see and break traffic.
class fake_network {
public:
  using handler = std::function<void(const std::string& from, const message& m)>;

  /// What crossed the network so far.
  struct counters {
    std::array<size_t, 3> frames{}; // by lane
    std::array<size_t, 3> bytes{};  // by lane
    size_t dropped = 0;
    size_t refused = 0; // connections closed by a failed handshake or a bad frame
  };

  explicit fake_network(size_t max_frame_bytes = 64 << 20)
      : max_frame_(max_frame_bytes) {}

  /// Adds a node holding `secret`; `on_message` sees what authenticated peers send it.
  void add_node(const std::string& name, const std::string& secret, handler on_message);

  /// Opens a connection from `a` to `b` and runs the handshake over frames; an error
  /// (e.g. a secret mismatch) leaves them unconnected.
  result<void> connect(const std::string& a, const std::string& b);

  /// Whether `a` and `b` are connected and authenticated.
  bool connected(const std::string& a, const std::string& b) const;

  /// Queues `m` from `from` to `to`; an error when they are not connected.
  result<void> send(const std::string& from, const std::string& to, const message& m);

  /// Delivers up to `max` queued frames, control and calls before bulk on each
  /// connection; returns how many were delivered.
  size_t deliver(size_t max = static_cast<size_t>(-1));

  /// Puts raw bytes on the wire from `from` to `to`, as a broken or hostile peer would;
  /// they are decoded on the next `deliver`.
  void inject(const std::string& from, const std::string& to, std::vector<uint8_t> bytes);

  /// Drops every frame for which `pred` returns true, instead of delivering it.
  void drop_if(std::function<bool(const std::string& from, const std::string& to,
                                  const message& m)>
                   pred);

  /// Cuts the connection between `a` and `b` (both directions), dropping what is queued.
  void disconnect(const std::string& a, const std::string& b);

  const counters& stats() const noexcept { return stats_; }

  /// Why the last connection was closed, for tests.
  const std::string& last_refusal() const noexcept { return last_refusal_; }

private:
  struct node {
    std::string secret;
    handler on_message;
  };

  // One direction of a connection: frames queued per lane, and the receiver's decoder.
  struct link {
    std::array<std::deque<std::vector<uint8_t>>, 3> queued;
    std::unique_ptr<frame_decoder> decoder;
    bool open = false;
  };

  using key = std::pair<std::string, std::string>;

  void refuse(const std::string& a, const std::string& b, const std::string& why);

  size_t max_frame_;
  std::map<std::string, node> nodes_;
  std::map<key, link> links_;
  std::function<bool(const std::string&, const std::string&, const message&)> drop_;
  counters stats_;
  std::string last_refusal_;
};

} // namespace swarm::wire_msg
