#pragma once

#include <array>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "base/result.hpp"
#include "transport/handshake.hpp"
#include "transport/transport.hpp"
#include "transport/wire_codec.hpp"

namespace swarm::wire_msg {

/// Several nodes in one process, for deterministic tests of cross-node protocols. Every
/// message is really encoded into a frame and decoded on arrival (the codec, size limit
/// and handshake run as on a socket), but nothing moves until the test calls `deliver`:
/// time and order are the test's. Per connection, control and call frames overtake bulk
/// ones, as the lanes promise. Counters, a drop hook and a hold hook (delay chosen
/// messages until the test releases them) let tests see and break traffic.
///
/// A node is either a bare handler (`add_node`) or a whole cluster node running on a
/// `transport` from `attach`/`factory`. Sending and connecting are thread-safe; handlers
/// run on the thread that calls `deliver`, never under the network's lock.
class fake_network {
public:
  using handler = std::function<void(const std::string& from, const message& m)>;
  using predicate = std::function<bool(const std::string& from, const std::string& to,
                                       const message& m)>;

  /// What crossed the network so far.
  struct counters {
    std::array<size_t, 3> frames{}; // by lane
    std::array<size_t, 3> bytes{};  // by lane
    size_t dropped = 0;
    size_t held = 0;
    size_t refused = 0; // connections closed by a failed handshake or a bad frame
  };

  explicit fake_network(size_t max_frame_bytes = 64 << 20)
      : max_frame_(max_frame_bytes) {}

  /// Adds a node holding `secret`; `on_message` sees what authenticated peers send it.
  /// An error when a node of that name is already on the network.
  result<void> add_node(const std::string& name, const std::string& secret,
                        handler on_message);

  /// Adds the node `cfg.name` and returns its transport: what the node sends goes on this
  /// network, and `h` sees what reaches it. Destroying the transport removes the node
  /// (its peers see their connections close) once none of its handlers runs. An error
  /// when a node of that name is already on the network.
  result<std::unique_ptr<transport>> attach(const endpoint_config& cfg,
                                            endpoint_handlers h);

  /// A factory that attaches each node started with it to this network.
  transport_factory factory();

  /// Opens a connection from `a` to `b` and runs the handshake over frames; an error
  /// (e.g. a secret mismatch) leaves them unconnected.
  result<void> connect(const std::string& a, const std::string& b);

  /// Whether `a` and `b` are connected and authenticated.
  bool connected(const std::string& a, const std::string& b) const;

  /// Queues `m` from `from` to `to`; an error when they are not connected.
  result<void> send(const std::string& from, const std::string& to, const message& m);

  /// Delivers up to `max` queued frames, control and calls before bulk on each
  /// connection; returns how many messages were delivered.
  size_t deliver(size_t max = static_cast<size_t>(-1));

  /// Puts raw bytes on the wire from `from` to `to`, as a broken or hostile peer would;
  /// they are decoded on the next `deliver`.
  void inject(const std::string& from, const std::string& to, std::vector<uint8_t> bytes);

  /// A connection whose far end is the test playing a hostile peer, not a node: what the
  /// test sends faces the node's side of the handshake as a socket's bytes would, and
  /// what the node answers waits in the connection's inbox. Messages that get past the
  /// handshake reach the node's `on_message`, under the name the peer proved.
  using raw_id = size_t;

  /// Opens a connection to node `to` (the test is the initiator). The node's hello is in
  /// the inbox at once.
  result<raw_id> open_raw(const std::string& to);

  /// Node `from` dials a hostile acceptor it found at `address` (the test is the
  /// acceptor). The node's hello is in the inbox at once.
  result<raw_id> dial_raw(const std::string& from, const std::string& address);

  /// Sends `m` to the node on a raw connection; an error, and the connection closed, when
  /// the node refuses it.
  result<void> send_raw(raw_id id, const message& m);

  /// Takes what the node has sent on a raw connection so far.
  std::vector<message> take_raw(raw_id id);

  /// Drops every message for which `pred` returns true, instead of delivering it.
  void drop_if(predicate pred);

  /// Holds back every message for which `pred` returns true until `release_held`.
  void hold_if(predicate pred);

  /// Calls `f` with every message the network decides to deliver (past drops and
  /// holds), in that order, under the network's lock (`f` must not call it): what a
  /// simulation traces and fingerprints. Empty: none.
  void watch(std::function<void(const std::string& from, const std::string& to,
                                const message& m)>
                 f);

  /// Refuses every connection from `a` to `b` for which `pred(a, b)` returns true (a
  /// partition); empty: none.
  void refuse_connections_if(
      std::function<bool(const std::string& a, const std::string& b)> pred);

  /// Delivers the held messages, in the order they were held, before any message
  /// queued after them; returns how many.
  size_t release_held();

  /// Ends a fault: holds nothing more and delivers what was held, at once, so no message
  /// sent after a held one on its connection arrives before it (as on TCP).
  size_t heal();

  /// Ends a fault as `heal` does, but what was held arrives with the connections' turns
  /// drawn from `seed`: each connection's messages in the order they were sent, the
  /// connections interleaved at random (as arrivals on separate sockets may be).
  size_t heal_interleaved(uint32_t seed);

  /// Cuts the connection between `a` and `b` (both directions), dropping what is queued;
  /// both sides' transports report the peer down, saying `why`.
  void disconnect(const std::string& a, const std::string& b,
                  const std::string& why = "disconnected by the test");

  counters stats() const;

  /// Why the last connection was closed, for tests.
  std::string last_refusal() const;

private:
  class view;

  struct node {
    std::string secret;
    endpoint_handlers handlers;
    size_t running = 0; // handlers of this node running now
  };

  // One direction of a connection: frames queued per lane, and the receiver's decoder.
  struct link {
    std::array<std::deque<std::vector<uint8_t>>, 3> queued;
    std::unique_ptr<frame_decoder> decoder;
    bool open = false;
    bool authenticated = false; // false for injected raw links
  };

  // The node's side of a raw connection.
  struct raw_link {
    std::string node;
    std::unique_ptr<handshake> hs;
    frame_decoder decoder;
    std::vector<message> inbox;
    bool open = true;
  };

  using key = std::pair<std::string, std::string>;
  using guard = std::unique_lock<std::mutex>;
  // A handler to run outside the lock: (node, its handler invocation).
  using pending = std::vector<std::pair<std::string, std::function<void(node&)>>>;

  result<void> add(const std::string& name, const std::string& secret,
                   endpoint_handlers h);
  void remove(const std::string& name);
  void refuse(const std::string& a, const std::string& b, const std::string& why,
              pending& out);
  void cut(const std::string& a, const std::string& b, const std::string& why,
           pending& out);
  // Runs the handlers in `calls` without the lock, keeping their nodes alive meanwhile.
  void run(guard& g, pending& calls);
  // Delivers the held messages: in the order held, or interleaved by connection as
  // drawn from `*seed`.
  size_t release_locked(guard& g, const uint32_t* seed = nullptr);
  // Drops, holds or queues `m` for its handler; the caller holds the lock.
  void deliver_one(const std::string& from, const std::string& to, message&& m,
                   pending& calls);
  // Queues `m` for its handler, past drops and holds (the watcher sees it).
  void hand_over(const std::string& from, const std::string& to, message&& m,
                 pending& calls);

  size_t max_frame_;
  mutable std::mutex mtx_;
  std::condition_variable idle_;
  std::map<std::string, node> nodes_;
  std::map<key, link> links_;
  predicate drop_;
  predicate hold_;
  std::function<void(const std::string&, const std::string&, const message&)> watch_;
  std::function<bool(const std::string&, const std::string&)> refuse_;
  std::vector<std::tuple<std::string, std::string, message>> held_;
  bool releasing_ = false; // held messages are being delivered: `deliver` waits its turn
  std::map<raw_id, raw_link> raws_;
  raw_id next_raw_ = 1;
  counters stats_;
  std::string last_refusal_;
};

} // namespace swarm::wire_msg
