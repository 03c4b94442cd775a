#include "transport/fake_network.hpp"

namespace swarm::wire_msg {

void fake_network::add_node(const std::string& name, const std::string& secret,
                            handler on_message) {
  nodes_[name] = node{secret, std::move(on_message)};
}

void fake_network::refuse(const std::string& a, const std::string& b,
                          const std::string& why) {
  ++stats_.refused;
  last_refusal_ = why;
  links_.erase({a, b});
  links_.erase({b, a});
}

result<void> fake_network::connect(const std::string& a, const std::string& b) {
  auto na = nodes_.find(a), nb = nodes_.find(b);
  if (na == nodes_.end() || nb == nodes_.end())
    return error{errc::invalid_argument,
                 "no node named '" + (na == nodes_.end() ? a : b) + "'"};
  handshake ha{a, na->second.secret}, hb{b, nb->second.secret};
  // Each handshake message crosses as a frame, decoded by the receiving side.
  auto cross = [this](const message& m, handshake& to, std::vector<message>& reply) {
    auto f = encode_frame(m);
    frame_decoder d{max_frame_};
    std::vector<message> in;
    if (auto ok = d.feed(f.data(), f.size(), in); !ok) return result<bool>{ok.err()};
    return to.accept(in.at(0), reply);
  };
  std::vector<message> to_b{ha.own_hello()}, to_a{hb.own_hello()};
  for (int round = 0; round < 3 && (!to_a.empty() || !to_b.empty()); ++round) {
    std::vector<message> next_a, next_b;
    for (auto& m : to_b)
      if (auto r = cross(m, hb, next_a); !r) {
        refuse(a, b, r.err().message);
        return r.err();
      }
    for (auto& m : to_a)
      if (auto r = cross(m, ha, next_b); !r) {
        refuse(a, b, r.err().message);
        return r.err();
      }
    to_a = std::move(next_a);
    to_b = std::move(next_b);
  }
  if (!ha.authenticated() || !hb.authenticated()) {
    refuse(a, b, "handshake did not complete");
    return error{errc::invalid_argument, last_refusal_};
  }
  for (auto& k : {key{a, b}, key{b, a}}) {
    auto& l = links_[k];
    l.open = true;
    l.decoder = std::make_unique<frame_decoder>(max_frame_);
  }
  return {};
}

bool fake_network::connected(const std::string& a, const std::string& b) const {
  auto i = links_.find({a, b});
  return i != links_.end() && i->second.open;
}

result<void> fake_network::send(const std::string& from, const std::string& to,
                                const message& m) {
  auto i = links_.find({from, to});
  if (i == links_.end() || !i->second.open)
    return error{errc::invalid_argument,
                 "no connection from '" + from + "' to '" + to + "'"};
  i->second.queued[static_cast<size_t>(lane_of(m))].push_back(encode_frame(m));
  return {};
}

void fake_network::inject(const std::string& from, const std::string& to,
                          std::vector<uint8_t> bytes) {
  auto& l = links_[{from, to}];
  if (!l.decoder) l.decoder = std::make_unique<frame_decoder>(max_frame_);
  l.open = true;
  l.queued[static_cast<size_t>(lane::control)].push_back(std::move(bytes));
}

void fake_network::drop_if(
    std::function<bool(const std::string&, const std::string&, const message&)> pred) {
  drop_ = std::move(pred);
}

void fake_network::disconnect(const std::string& a, const std::string& b) {
  links_.erase({a, b});
  links_.erase({b, a});
}

size_t fake_network::deliver(size_t max) {
  size_t delivered = 0;
  bool progress = true;
  while (progress && delivered < max) {
    progress = false;
    for (auto it = links_.begin(); it != links_.end() && delivered < max;) {
      auto [from, to] = it->first;
      auto& l = it->second;
      std::vector<uint8_t> frame;
      size_t lane_index = 0;
      for (; lane_index < l.queued.size(); ++lane_index)
        if (!l.queued[lane_index].empty()) {
          frame = std::move(l.queued[lane_index].front());
          l.queued[lane_index].pop_front();
          break;
        }
      if (lane_index == l.queued.size()) {
        ++it;
        continue;
      }
      progress = true;
      ++stats_.frames[lane_index];
      stats_.bytes[lane_index] += frame.size();
      std::vector<message> in;
      if (auto ok = l.decoder->feed(frame.data(), frame.size(), in); !ok) {
        ++it;
        refuse(from, to,
               "frame from '" + from + "' to '" + to + "': " + ok.err().message);
        it = links_.lower_bound(key{from, to});
        continue;
      }
      for (auto& m : in) {
        if (drop_ && drop_(from, to, m)) {
          ++stats_.dropped;
          continue;
        }
        ++delivered;
        auto n = nodes_.find(to);
        if (n != nodes_.end() && n->second.on_message) n->second.on_message(from, m);
      }
      // Handlers may send or disconnect: continue after this link, found afresh.
      it = links_.upper_bound(key{from, to});
    }
  }
  return delivered;
}

} // namespace swarm::wire_msg
