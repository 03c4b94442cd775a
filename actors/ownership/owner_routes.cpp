#include "actors/ownership/owner_routes.hpp"

#include "framework/detail/wire_convert.hpp"

namespace swarm::actors {

void add_owner_routes(wire_routes& routes, const owner_ref& owner,
                      const stream_senders_actor& streams) {
  using namespace wire_msg;
  routes.in_place<task_result>([&owner](const std::string& peer, task_result&& m) {
    owner.result(peer, std::move(m));
  });
  routes.in_place<stream_item>([&owner](const std::string& peer, stream_item&& m) {
    owner.stream(peer, std::move(m));
  });
  routes.in_place<objects_hand_over>(
      [&owner](const std::string& peer, objects_hand_over&& m) {
        owner.handed_over(peer, std::move(m));
      });
  routes.in_place<task_placed>([&owner](const std::string& peer, task_placed&& m) {
    owner.placed(peer, std::move(m));
  });
  auto borrows = [&owner](const std::string& peer, auto&& m) {
    owner.borrows(peer, std::move(m));
  };
  routes.in_place<object_borrow>(borrows);
  routes.in_place<object_borrowed>(borrows);
  routes.in_place<object_unborrow>(borrows);
  routes.mailbox<stream_ack>(streams, [](const std::string&, stream_ack&& m) {
    return std::make_tuple(stream_atom::value, detail::key_of(m.result), m.taken);
  });
}

} // namespace swarm::actors
