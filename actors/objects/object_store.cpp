#include "actors/objects/object_store.hpp"

#include <caf/all.hpp>

#include "actors/common/protocol.hpp"
#include "actors/objects/store_table.hpp"

namespace swarm::actors {

namespace {

caf::behavior object_store(caf::event_based_actor*, std::shared_ptr<store_table> table) {
  return {
      [table](stats_atom) {
        auto s = table->stats();
        return caf::make_message(s.objects, s.bytes, s.capacity, s.inline_threshold,
                                 s.rejected);
      },
      [table](lookup_atom, uint64_t owner, uint64_t seq) {
        return table->contains(object_id{owner, seq});
      },
  };
}

} // namespace

caf::actor spawn_object_store(caf::actor_system& sys,
                              std::shared_ptr<store_table> table) {
  return sys.spawn(object_store, std::move(table));
}

} // namespace swarm::actors
