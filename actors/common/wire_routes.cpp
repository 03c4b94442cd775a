#include "actors/common/wire_routes.hpp"

#include <stdexcept>

namespace swarm::actors {

const char* to_string(delivery d) {
  switch (d) {
  case delivery::none:
    return "none";
  case delivery::mailbox:
    return "mailbox";
  case delivery::in_place:
    return "in place";
  case delivery::posted:
    return "posted";
  }
  return "?";
}

void wire_routes::claim(size_t index, delivery how) {
  auto& r = routes_.at(index);
  if (r.how != delivery::none)
    throw std::logic_error(std::string{"wire message '"} +
                           wire_msg::message_names[index] + "' is routed twice (" +
                           to_string(r.how) + ", then " + to_string(how) + ")");
  r.how = how;
}

bool wire_routes::deliver(const std::string& peer, wire_msg::message&& m) const {
  auto& r = routes_[m.index()];
  if (r.how == delivery::none) return false;
  r.run(peer, std::move(m));
  return true;
}

} // namespace swarm::actors
