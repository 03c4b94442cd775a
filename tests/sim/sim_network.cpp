#include "tests/sim/sim_network.hpp"

#include <algorithm>

#include "transport/wire_codec.hpp"

namespace swarm::sim {

sim_network::sim_network(const int64_t& now, uint64_t seed, int64_t user_timeout_ms,
                         events ev)
    : now_(now), rng_(seed), user_timeout_ms_(user_timeout_ms), ev_(std::move(ev)) {}

bool sim_network::send(const std::string& from, const std::string& to,
                       const wire_msg::message& m) {
  auto e = ends_.find({from, to});
  if (e == ends_.end()) return false;
  packet p;
  p.from = from;
  p.to = to;
  p.epoch = e->second;
  p.frame = std::make_shared<const std::vector<uint8_t>>(wire_msg::encode_frame(m));
  transmit(std::move(p));
  return true;
}

std::optional<std::chrono::milliseconds>
sim_network::quiet_for(const std::string& at, const std::string& peer) const {
  auto h = heard_.find({at, peer});
  if (!connected(at, peer) || h == heard_.end()) return std::nullopt;
  return std::chrono::milliseconds(now_ - h->second);
}

void sim_network::open(const std::string& a, const std::string& b) {
  auto e = ++epochs_;
  for (auto& l : {link{a, b}, link{b, a}}) {
    ends_[l] = e;
    heard_[l] = now_;
  }
}

void sim_network::close(const std::string& from, const std::string& to,
                        const std::string& why) {
  if (!connected(from, to)) return;
  ev_.note("close " + from + " -> " + to + ": " + why);
  end(from, to, "node '" + from + "' closed the connection: " + why);
  ev_.down(from, to, why);
}

void sim_network::end(const std::string& from, const std::string& to, std::string why) {
  auto e = ends_.find({from, to});
  packet p;
  p.closes = true;
  p.from = from;
  p.to = to;
  p.epoch = e->second;
  p.why = std::move(why);
  ends_.erase(e);
  transmit(std::move(p));
}

void sim_network::crash(const std::string& node, const std::vector<std::string>& peers) {
  for (auto& peer : peers)
    if (connected(node, peer)) end(node, peer, "connection reset by peer '" + node + "'");
}

void sim_network::reset(const std::string& a, const std::string& b) {
  for (auto [x, y] : {link{a, b}, link{b, a}})
    if (ends_.erase({x, y}) > 0) ev_.down(x, y, "connection reset");
}

int64_t sim_network::latency(const std::string& from, const std::string& to) {
  auto l = 1 + static_cast<int64_t>(rng_() % 2);
  if (reordering_ > 0) l += static_cast<int64_t>(rng_() % 60);
  for (auto& [n, extra] : delays_)
    if (n == from || n == to) l += extra;
  return l;
}

void sim_network::cut(const link& direction, bool on) {
  auto& c = cuts_[direction];
  if (c.first == 0) c.second = now_;
  c.first += on ? 1 : -1;
  if (c.first == 0) cuts_.erase(direction);
}

void sim_network::delay(const std::string& node, int64_t extra, bool on) {
  if (on)
    delays_.emplace(node, extra);
  else
    delays_.erase(delays_.find({node, extra}));
}

bool sim_network::duplicating(const std::string& from, const std::string& to) const {
  for (auto& [n, count] : duplicating_)
    if (count > 0 && (n == from || n == to)) return true;
  return false;
}

// Puts `p` on the wire: in order behind what its direction carries.
void sim_network::transmit(packet p) {
  auto& last = last_at_[{p.from, p.to}];
  last = std::max(now_ + latency(p.from, p.to), last);
  if (!p.closes && duplicating(p.from, p.to)) {
    auto copy = p;
    wire_.emplace(std::make_pair(last, ++seq_), std::move(copy));
    last += static_cast<int64_t>(rng_() % 20);
  }
  wire_.emplace(std::make_pair(last, ++seq_), std::move(p));
}

void sim_network::deliver_due() {
  std::vector<std::pair<uint64_t, packet>> held;
  while (!wire_.empty() && wire_.begin()->first.first <= now_) {
    auto seq = wire_.begin()->first.second;
    auto p = std::move(wire_.begin()->second);
    wire_.erase(wire_.begin());
    if (is_cut(p.from, p.to))
      held.emplace_back(seq, std::move(p)); // the sender's kernel tries again
    else
      deliver(p);
  }
  for (auto& [seq, p] : held)
    wire_.emplace(std::make_pair(now_ + 1, seq), std::move(p));
  time_out_cut_connections();
}

void sim_network::deliver(const packet& p) {
  auto end = ends_.find({p.to, p.from});
  bool open = ev_.up(p.to) && end != ends_.end() && end->second == p.epoch;
  if (p.closes) {
    if (!open) return;
    ends_.erase(end);
    ev_.down(p.to, p.from, p.why);
    return;
  }
  if (!open) {
    ev_.note("lost on a closed connection: " + p.from + " -> " + p.to);
    return;
  }
  heard_[{p.to, p.from}] = now_;
  std::vector<wire_msg::message> in;
  wire_msg::frame_decoder decoder{size_t{1} << 24};
  if (auto ok = decoder.feed(p.frame->data(), p.frame->size(), in); !ok)
    return ev_.broken("a frame from " + p.from + " to " + p.to +
                      " did not decode: " + ok.err().message);
  deliveries_ += in.size();
  ev_.arrived(p.to, p.from, std::move(in));
}

// A direction cut longer than the user timeout resets the connections across it, at both
// ends: neither's bytes are acknowledged.
void sim_network::time_out_cut_connections() {
  for (auto& [l, c] : cuts_) {
    if (now_ - c.second <= user_timeout_ms_) continue;
    auto& [a, b] = l;
    for (auto [x, y] : {link{a, b}, link{b, a}})
      if (ends_.erase({x, y}) > 0)
        ev_.down(x, y,
                 "no acknowledgement for " + std::to_string(user_timeout_ms_) + " ms");
  }
}

} // namespace swarm::sim
