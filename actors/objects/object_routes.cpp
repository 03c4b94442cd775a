#include "actors/objects/object_routes.hpp"

#include "framework/detail/wire_convert.hpp"

namespace swarm::actors {

void add_object_routes(wire_routes& routes, const object_manager_actor& objects) {
  using namespace wire_msg;
  routes.mailbox<object_pull>(objects, [](const std::string& peer, object_pull&& m) {
    return std::make_tuple(pull_atom::value, peer, std::move(m));
  });
  routes.mailbox<object_chunk>(objects, [](const std::string& peer, object_chunk&& m) {
    return std::make_tuple(chunk_atom::value, peer, std::move(m));
  });
  routes.mailbox<object_free>(objects, [](const std::string&, object_free&& m) {
    return std::make_tuple(free_atom::value, detail::key_of(m.id));
  });
  routes.mailbox<object_replicate>(
      objects, [](const std::string& peer, object_replicate&& m) {
        return std::make_tuple(replica_atom::value, peer, std::move(m));
      });
  routes.mailbox<objects_taken>(objects, [](const std::string& peer, objects_taken&& m) {
    return std::make_tuple(handed_atom::value, peer, std::move(m));
  });
  routes.mailbox<device_share>(objects, [](const std::string& peer, device_share&& m) {
    return std::make_tuple(share_atom::value, peer, std::move(m));
  });
  routes.mailbox<device_released>(
      objects, [](const std::string& peer, device_released&& m) {
        return std::make_tuple(unmapped_atom::value, peer, std::move(m));
      });
  routes.mailbox<object_replicated>(
      objects, [](const std::string& peer, object_replicated&& m) {
        return std::make_tuple(replicated_atom::value, peer, std::move(m));
      });
}

} // namespace swarm::actors
