#include "framework/actor_handle.hpp"

namespace swarm::detail {

actor_record_ptr unreachable_actor(const actor_address& addr, std::string why) {
  actor_spec spec;
  spec.type_name = addr.type_name;
  auto rec = std::make_shared<actor_record>(std::move(spec));
  rec->mark_dead(std::move(why));
  return rec;
}

result<actor_record_ptr> read_actor(codec_context* node, const actor_address& addr,
                                    const std::type_info& type) {
  auto* c = dynamic_cast<core*>(node);
  if (!c)
    return error{errc::invalid_argument,
                 "a handle of actor type '" + addr.type_name + "' (on node '" +
                     addr.node + "') was read outside a node: only a node reads handles"};
  auto* info = c->app().actor_info(addr.type_name);
  if (info && info->type && *info->type != type)
    return error{errc::type_mismatch, "node '" + c->node_name() + "' got a handle of " +
                                          "actor type '" + addr.type_name +
                                          "' where a handle of " + demangle(type.name()) +
                                          " was expected"};
  auto rec = c->actor_at(addr);
  if (!rec) return unreachable_actor(addr, rec.err().message);
  return rec;
}

} // namespace swarm::detail
