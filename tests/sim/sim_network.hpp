#pragma once

// The network of the deterministic simulation (membership_sim.hpp): a connection per
// pair of nodes, each direction in order as TCP keeps it, every message encoded and
// decoded, in the simulation's virtual time, under the faults a seed draws.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "transport/wire_message.hpp"

namespace swarm::sim {

/// The connections between the simulated nodes, and what is on its way over them.
/// Each message takes 1-2 ms (drawn from the seed), more under a delay or a reorder; a
/// direction cut holds what it carries (the sender's kernel retransmits) and, past the
/// user timeout, times out the connections across it at both ends. A node closing its
/// end hears at once, its peer when the close arrives; what arrives at an end that
/// closed is lost. Time is the caller's: `now`, in virtual ms, read as it goes.
class sim_network {
public:
  using link = std::pair<std::string, std::string>; // (from, to), or (this end, peer)

  /// What the network tells the nodes.
  struct events {
    /// Messages from `from` arrived at `to`.
    std::function<void(const std::string& to, const std::string& from,
                       std::vector<wire_msg::message>)>
        arrived;
    /// The end of `at` to `peer` closed, `why`.
    std::function<void(const std::string& at, const std::string& peer,
                       const std::string& why)>
        down;
    /// Whether `node`'s process runs (what arrives at one that does not is lost).
    std::function<bool(const std::string& node)> up;
    /// Something worth a line in the run's trace; `broken`: an invariant it broke.
    std::function<void(const std::string&)> note;
    std::function<void(const std::string&)> broken;
  };

  sim_network(const int64_t& now, uint64_t seed, int64_t user_timeout_ms, events ev);

  bool connected(const std::string& from, const std::string& to) const {
    return ends_.count({from, to}) > 0;
  }
  /// Sends `m` on the open connection from `from` to `to`; false when there is none.
  bool send(const std::string& from, const std::string& to, const wire_msg::message& m);
  /// How long nothing came to `at` from `peer` on their connection; empty without one.
  std::optional<std::chrono::milliseconds> quiet_for(const std::string& at,
                                                     const std::string& peer) const;
  /// A dial between `a` and `b` got through: a new connection replaces theirs.
  void open(const std::string& a, const std::string& b);
  /// `from` closes its end to `to`.
  void close(const std::string& from, const std::string& to, const std::string& why);
  /// `node`'s process died: its ends close, its peers hear as the closes arrive.
  void crash(const std::string& node, const std::vector<std::string>& peers);
  /// The connection between `a` and `b` resets: both ends hear at once.
  void reset(const std::string& a, const std::string& b);

  /// Whether nothing cuts either direction between `a` and `b`.
  bool reachable(const std::string& a, const std::string& b) const {
    return !is_cut(a, b) && !is_cut(b, a);
  }
  /// How long a message from `from` to `to` takes now (a draw).
  int64_t latency(const std::string& from, const std::string& to);

  // The faults, each begun (`on`) and ended once.
  void cut(const link& direction, bool on);
  void delay(const std::string& node, int64_t extra, bool on);
  void reorder(bool on) { reordering_ += on ? 1 : -1; }
  void duplicate(const std::string& node, bool on) { duplicating_[node] += on ? 1 : -1; }

  /// Delivers what is due by now, and times out the connections cut for too long.
  void deliver_due();

  uint64_t deliveries() const { return deliveries_; }

private:
  // A message or the close of a connection on its way from one end to the other.
  struct packet {
    bool closes = false;
    std::string from, to;
    uint64_t epoch = 0; // the connection it travels on
    std::shared_ptr<const std::vector<uint8_t>> frame;
    std::string why;
  };

  bool is_cut(const std::string& from, const std::string& to) const {
    return cuts_.count({from, to}) > 0;
  }
  bool duplicating(const std::string& from, const std::string& to) const;
  // Closes `from`'s open end to `to`; the close travels to `to` behind what it sent.
  void end(const std::string& from, const std::string& to, std::string why);
  void transmit(packet p);
  void deliver(const packet& p);
  void time_out_cut_connections();

  const int64_t& now_;
  std::mt19937_64 rng_;
  int64_t user_timeout_ms_;
  events ev_;
  uint64_t seq_ = 0;
  uint64_t epochs_ = 0;
  uint64_t deliveries_ = 0;
  std::map<std::pair<int64_t, uint64_t>, packet> wire_; // by (when, sent as)
  std::map<link, int64_t> last_at_;              // when a direction's last packet lands
  std::map<link, uint64_t> ends_;                // (end, peer): its connection's epoch
  std::map<link, int64_t> heard_;                // (end, peer): when bytes last came
  std::map<link, std::pair<int, int64_t>> cuts_; // direction: cuts under way, since
  std::multiset<std::pair<std::string, int64_t>> delays_;
  std::map<std::string, int> duplicating_;
  int reordering_ = 0;
};

} // namespace swarm::sim
