#include "transport/fake_network.hpp"

#include <algorithm>
#include <iterator>
#include <optional>
#include <random>

namespace swarm::wire_msg {

/// A node's transport on the fake network.
class fake_network::view final : public transport {
public:
  view(fake_network& net, std::string name,
       std::function<std::optional<std::pair<std::string, uint16_t>>(const std::string&)>
           resolve)
      : net_(net), name_(std::move(name)), resolve_(std::move(resolve)) {}
  ~view() override { net_.remove(name_); }

  result<std::string> connect(const std::string& name, const std::string&, uint16_t,
                              std::chrono::milliseconds) override {
    if (auto ok = net_.connect(name_, name); !ok) return ok.err();
    return name;
  }
  // A peer not connected is dialled, as the endpoint does, where `resolve` knows it;
  // here the dial ends at once.
  result<void> send(const std::string& peer, const message& m) override {
    if (!net_.connected(name_, peer) && resolve_ && resolve_(peer))
      if (auto ok = net_.connect(name_, peer); !ok) return ok.err();
    return net_.send(name_, peer, m);
  }
  bool connected(const std::string& peer) const override {
    return net_.connected(name_, peer);
  }
  void disconnect(const std::string& peer, const std::string& why) override {
    net_.disconnect(name_, peer, why);
  }

private:
  fake_network& net_;
  std::string name_;
  std::function<std::optional<std::pair<std::string, uint16_t>>(const std::string&)>
      resolve_;
};

result<void> fake_network::add(const std::string& name, const std::string& secret,
                               endpoint_handlers h) {
  guard g{mtx_};
  if (nodes_.count(name))
    return error{errc::invalid_argument,
                 "node '" + name + "' is already on the fake network"};
  auto& n = nodes_[name];
  n.secret = secret;
  n.handlers = std::move(h);
  return {};
}

result<void> fake_network::add_node(const std::string& name, const std::string& secret,
                                    handler on_message) {
  endpoint_handlers h;
  h.on_message = [f = std::move(on_message)](const std::string& from, message&& m) {
    f(from, m);
  };
  return add(name, secret, std::move(h));
}

result<std::unique_ptr<transport>> fake_network::attach(const endpoint_config& cfg,
                                                        endpoint_handlers h) {
  auto resolve = h.resolve;
  if (auto ok = add(cfg.name, cfg.secret, std::move(h)); !ok) return ok.err();
  return std::unique_ptr<transport>{std::make_unique<view>(*this, cfg.name, resolve)};
}

transport_factory fake_network::factory() {
  return [this](endpoint_config cfg, endpoint_handlers h) {
    return attach(cfg, std::move(h));
  };
}

void fake_network::remove(const std::string& name) {
  guard g{mtx_};
  auto i = nodes_.find(name);
  if (i == nodes_.end()) return;
  pending calls;
  std::vector<std::string> peers;
  for (auto& [k, l] : links_)
    if (k.first == name) peers.push_back(k.second);
  for (auto& p : peers)
    cut(name, p, "node '" + name + "' left the network", calls);
  // Its own handlers do not run again: only its peers learn it left.
  calls.erase(std::remove_if(calls.begin(), calls.end(),
                             [&](auto& c) { return c.first == name; }),
              calls.end());
  run(g, calls);
  idle_.wait(g, [&] { return nodes_[name].running == 0; });
  nodes_.erase(name);
}

void fake_network::run(guard& g, pending& calls) {
  if (calls.empty()) return;
  std::vector<node*> targets;
  for (auto& c : calls) {
    auto i = nodes_.find(c.first);
    targets.push_back(i == nodes_.end() ? nullptr : &i->second);
    if (targets.back()) ++targets.back()->running;
  }
  g.unlock();
  for (size_t k = 0; k < calls.size(); ++k)
    if (targets[k]) calls[k].second(*targets[k]);
  g.lock();
  for (auto* n : targets)
    if (n) --n->running;
  calls.clear();
  idle_.notify_all();
}

void fake_network::cut(const std::string& a, const std::string& b, const std::string& why,
                       pending& out) {
  for (auto& [from, to] : {key{a, b}, key{b, a}}) {
    auto i = links_.find({from, to});
    if (i == links_.end()) continue;
    // The receiving side of each direction learns its peer is gone.
    if (i->second.authenticated)
      out.emplace_back(to, [peer = from, why](node& n) {
        if (n.handlers.on_peer_down) n.handlers.on_peer_down(peer, why);
      });
    links_.erase(i);
  }
}

void fake_network::refuse(const std::string& a, const std::string& b,
                          const std::string& why, pending& out) {
  ++stats_.refused;
  last_refusal_ = why;
  cut(a, b, why, out);
}

result<void> fake_network::connect(const std::string& a, const std::string& b) {
  guard g{mtx_};
  auto na = nodes_.find(a), nb = nodes_.find(b);
  if (na == nodes_.end() || nb == nodes_.end())
    return error{errc::node_unreachable,
                 "no node named '" + (na == nodes_.end() ? a : b) + "'"};
  auto ab = links_.find({a, b});
  if (ab != links_.end() && ab->second.authenticated) return {};
  if (refuse_ && refuse_(a, b))
    return error{errc::node_unreachable,
                 "the network refused a connection from '" + a + "' to '" + b + "'"};
  // `a` dials `b`, whose address on this network is its name.
  handshake ha{handshake::role::initiator, a, na->second.secret, b},
      hb{handshake::role::acceptor, b, nb->second.secret, b};
  // Each handshake message crosses as a frame, decoded by the receiving side under the
  // limit for unproven peers.
  auto cross = [](const message& m, handshake& to, std::vector<message>& reply) {
    auto f = encode_frame(m);
    frame_decoder d{endpoint_config{}.pre_auth_frame_bytes};
    std::vector<message> in;
    if (auto ok = d.feed(f.data(), f.size(), in); !ok) return result<bool>{ok.err()};
    return to.accept(in.at(0), reply);
  };
  pending calls;
  auto fail = [&](const std::string& why) -> result<void> {
    refuse(a, b, why, calls);
    run(g, calls);
    return error{errc::node_unreachable, why};
  };
  std::vector<message> to_b{ha.own_hello()}, to_a{hb.own_hello()};
  for (int round = 0; round < 3 && (!to_a.empty() || !to_b.empty()); ++round) {
    std::vector<message> next_a, next_b;
    for (auto& m : to_b)
      if (auto r = cross(m, hb, next_a); !r) return fail(r.err().message);
    for (auto& m : to_a)
      if (auto r = cross(m, ha, next_b); !r) return fail(r.err().message);
    to_a = std::move(next_a);
    to_b = std::move(next_b);
  }
  if (!ha.authenticated() || !hb.authenticated())
    return fail("handshake did not complete");
  for (auto& [from, to] : {key{a, b}, key{b, a}}) {
    auto& l = links_[{from, to}];
    l = link{};
    l.open = true;
    l.authenticated = true;
    l.decoder = std::make_unique<frame_decoder>(max_frame_);
    calls.emplace_back(to, [peer = from](node& n) {
      if (n.handlers.on_peer_up) n.handlers.on_peer_up(peer);
    });
  }
  run(g, calls);
  return {};
}

bool fake_network::connected(const std::string& a, const std::string& b) const {
  guard g{mtx_};
  auto i = links_.find({a, b});
  return i != links_.end() && i->second.open && i->second.authenticated;
}

result<void> fake_network::send(const std::string& from, const std::string& to,
                                const message& m) {
  auto frame = encode_frame(m);
  guard g{mtx_};
  auto i = links_.find({from, to});
  if (i == links_.end() || !i->second.open)
    return error{errc::node_unreachable,
                 "no connection from '" + from + "' to '" + to + "'"};
  i->second.queued[static_cast<size_t>(lane_of(m))].push_back(std::move(frame));
  return {};
}

void fake_network::inject(const std::string& from, const std::string& to,
                          std::vector<uint8_t> bytes) {
  guard g{mtx_};
  auto& l = links_[{from, to}];
  if (!l.decoder) l.decoder = std::make_unique<frame_decoder>(max_frame_);
  l.open = true;
  l.queued[static_cast<size_t>(lane::control)].push_back(std::move(bytes));
}

result<fake_network::raw_id> fake_network::open_raw(const std::string& to) {
  guard g{mtx_};
  auto n = nodes_.find(to);
  if (n == nodes_.end())
    return error{errc::node_unreachable, "no node named '" + to + "'"};
  auto id = next_raw_++;
  auto& r =
      raws_
          .emplace(id, raw_link{to,
                                std::make_unique<handshake>(handshake::role::acceptor, to,
                                                            n->second.secret, to),
                                frame_decoder{max_frame_},
                                {},
                                true})
          .first->second;
  r.decoder.set_limits(endpoint_config{}.pre_auth_frame_bytes, 1);
  r.inbox.push_back(r.hs->own_hello());
  return id;
}

result<fake_network::raw_id> fake_network::dial_raw(const std::string& from,
                                                    const std::string& address) {
  auto id = open_raw(from);
  if (!id) return id;
  guard g{mtx_};
  auto& r = raws_.at(*id);
  r.hs = std::make_unique<handshake>(handshake::role::initiator, from,
                                     nodes_.at(from).secret, address);
  r.inbox.assign(1, r.hs->own_hello());
  return id;
}

result<void> fake_network::send_raw(raw_id id, const message& m) {
  guard g{mtx_};
  auto i = raws_.find(id);
  if (i == raws_.end() || !i->second.open)
    return error{errc::node_unreachable,
                 "raw connection " + std::to_string(id) + " is closed"};
  auto& r = i->second;
  pending calls;
  auto refuse_raw = [&](const std::string& why) -> result<void> {
    r.open = false;
    ++stats_.refused;
    last_refusal_ = "raw connection to '" + r.node + "': " + why;
    return error{errc::node_unreachable, last_refusal_};
  };
  auto f = encode_frame(m);
  std::vector<message> in;
  auto ok = r.decoder.feed(f.data(), f.size(), in);
  while (ok && !in.empty()) {
    for (auto& got : in) {
      auto was_up = r.hs->authenticated();
      auto for_app = r.hs->accept(got, r.inbox);
      if (!for_app) return refuse_raw(for_app.err().message);
      if (!was_up && r.hs->authenticated())
        r.decoder.set_limits(max_frame_, static_cast<size_t>(-1));
      if (*for_app) deliver_one(r.hs->peer_name(), r.node, std::move(got), calls);
    }
    in.clear();
    ok = r.decoder.commit(0, in);
  }
  if (!ok) return refuse_raw(ok.err().message);
  run(g, calls);
  return {};
}

std::vector<message> fake_network::take_raw(raw_id id) {
  guard g{mtx_};
  auto i = raws_.find(id);
  if (i == raws_.end()) return {};
  return std::exchange(i->second.inbox, {});
}

void fake_network::refuse_connections_if(
    std::function<bool(const std::string&, const std::string&)> pred) {
  guard g{mtx_};
  refuse_ = std::move(pred);
}

void fake_network::drop_if(predicate pred) {
  guard g{mtx_};
  drop_ = std::move(pred);
}

void fake_network::hold_if(predicate pred) {
  guard g{mtx_};
  hold_ = std::move(pred);
}

void fake_network::watch(
    std::function<void(const std::string&, const std::string&, const message&)> f) {
  guard g{mtx_};
  watch_ = std::move(f);
}

void fake_network::disconnect(const std::string& a, const std::string& b,
                              const std::string& why) {
  guard g{mtx_};
  pending calls;
  cut(a, b, why, calls);
  run(g, calls);
}

fake_network::counters fake_network::stats() const {
  guard g{mtx_};
  return stats_;
}

std::string fake_network::last_refusal() const {
  guard g{mtx_};
  return last_refusal_;
}

void fake_network::deliver_one(const std::string& from, const std::string& to,
                               message&& m, pending& calls) {
  if (drop_ && drop_(from, to, m)) {
    ++stats_.dropped;
    return;
  }
  if (hold_ && hold_(from, to, m)) {
    ++stats_.held;
    held_.emplace_back(from, to, std::move(m));
    return;
  }
  hand_over(from, to, std::move(m), calls);
}

void fake_network::hand_over(const std::string& from, const std::string& to, message&& m,
                             pending& calls) {
  if (watch_) watch_(from, to, m);
  calls.emplace_back(to, [from, m = std::move(m)](node& n) mutable {
    if (n.handlers.on_message) n.handlers.on_message(from, std::move(m));
  });
}

size_t fake_network::release_held() {
  guard g{mtx_};
  return release_locked(g);
}

size_t fake_network::heal() {
  guard g{mtx_};
  hold_ = nullptr;
  return release_locked(g);
}

size_t fake_network::heal_interleaved(uint32_t seed) {
  guard g{mtx_};
  hold_ = nullptr;
  return release_locked(g, &seed);
}

size_t fake_network::release_locked(guard& g, const uint32_t* seed) {
  pending calls;
  auto held = std::move(held_);
  held_.clear();
  auto call = [&](std::tuple<std::string, std::string, message>& h) {
    auto& [from, to, m] = h;
    hand_over(from, to, std::move(m), calls);
  };
  if (!seed) {
    for (auto& h : held)
      call(h);
  } else {
    // Each connection's turn comes at random; its messages stay in order.
    std::map<key, std::deque<size_t>> by_link;
    for (size_t i = 0; i < held.size(); ++i)
      by_link[{std::get<0>(held[i]), std::get<1>(held[i])}].push_back(i);
    std::mt19937 turns{*seed};
    while (!by_link.empty()) {
      auto it = std::next(by_link.begin(),
                          static_cast<std::ptrdiff_t>(turns() % by_link.size()));
      call(held[it->second.front()]);
      it->second.pop_front();
      if (it->second.empty()) by_link.erase(it);
    }
  }
  auto n = calls.size();
  // Run without the lock: `deliver` holds back meanwhile, so what was queued after the
  // held messages does not overtake them.
  releasing_ = true;
  run(g, calls);
  releasing_ = false;
  return n;
}

size_t fake_network::deliver(size_t max) {
  guard g{mtx_};
  if (releasing_) return 0;
  size_t delivered = 0;
  bool progress = true;
  while (progress && delivered < max && !releasing_) {
    progress = false;
    // One frame per connection per round, so no connection starves the others. Handlers
    // run without the lock and may send, connect or disconnect: links are found afresh.
    std::optional<key> cursor;
    while (delivered < max && !releasing_) {
      auto it = cursor ? links_.upper_bound(*cursor) : links_.begin();
      size_t lane_index = 0;
      for (; it != links_.end(); ++it) {
        auto& q = it->second.queued;
        for (lane_index = 0; lane_index < q.size() && q[lane_index].empty();
             ++lane_index) {
        }
        if (lane_index < q.size()) break;
      }
      if (it == links_.end()) break;
      progress = true;
      cursor = it->first;
      auto [from, to] = it->first;
      auto& l = it->second;
      auto frame = std::move(l.queued[lane_index].front());
      l.queued[lane_index].pop_front();
      ++stats_.frames[lane_index];
      stats_.bytes[lane_index] += frame.size();
      std::vector<message> in;
      pending calls;
      if (auto ok = l.decoder->feed(frame.data(), frame.size(), in); !ok) {
        refuse(from, to, "frame from '" + from + "' to '" + to + "': " + ok.err().message,
               calls);
      } else {
        for (auto& m : in) {
          auto before = calls.size();
          deliver_one(from, to, std::move(m), calls);
          delivered += calls.size() - before;
        }
      }
      run(g, calls);
    }
  }
  return delivered;
}

} // namespace swarm::wire_msg
