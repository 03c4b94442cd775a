#include "actors/objects/device_lending.hpp"

#include "framework/device_buffer.hpp"

namespace swarm::actors {

device_lending::device_lending(std::string node,
                               std::shared_ptr<detail::device_memory> devices)
    : node_(std::move(node)), devices_(std::move(devices)),
      host_(devices_ ? devices_->sharing_host() : std::string{}) {}

bool device_lending::asks_share(const detail::type_descriptor* type) const {
  return !host_.empty() && type &&
         detail::same_type(*type, detail::type_of<device_buffer>());
}

wire_msg::device_share device_lending::lend(const std::string& peer, const object_key& k,
                                            const detail::boxed_value* v,
                                            const std::string& reader_host) {
  wire_msg::device_share out;
  out.id = {k.first, k.second};
  auto refuse = [&](std::string why) {
    out.refused = "node '" + node_ + "' " + std::move(why);
    return out;
  };
  if (host_.empty()) return refuse("lends no device memory");
  if (reader_host != host_) return refuse("is on another host, or uses another backend");
  if (!v || !v->type) return refuse("holds no value of the object");
  if (!detail::same_type(*v->type, detail::type_of<device_buffer>()))
    return refuse("holds a " + v->type->name + ", not a device buffer");
  auto& b = *static_cast<const device_buffer*>(v->ptr.get());
  if (!b.on_device()) return refuse("holds the buffer in host memory");
  auto s = devices_->share(*b.block());
  if (!s) return refuse("cannot share it: " + s.err().message);
  out.device = std::move(s->device);
  out.handle.assign(s->handle.begin(), s->handle.end());
  out.size = b.size();
  lent_[{peer, k}].push_back(*v);
  return out;
}

void device_lending::released(const std::string& peer, const object_key& k) {
  auto i = lent_.find({peer, k});
  if (i == lent_.end()) return;
  i->second.pop_back();
  if (i->second.empty()) lent_.erase(i);
}

void device_lending::lost(const std::string& peer) {
  for (auto i = lent_.lower_bound({peer, {0, 0}});
       i != lent_.end() && i->first.first == peer;)
    i = lent_.erase(i);
}

result<detail::boxed_value> device_lending::map(const wire_msg::device_share& m,
                                                std::function<void()> released) {
  if (host_.empty())
    return error{errc::invalid_argument, "node '" + node_ + "' maps no device memory"};
  auto block =
      devices_->map_shared({m.device, std::string(m.handle.begin(), m.handle.end())},
                           m.size, std::move(released));
  if (!block) return block.err();
  return detail::boxed_value{std::make_shared<const device_buffer>(std::move(*block)),
                             &detail::type_of<device_buffer>()};
}

} // namespace swarm::actors
