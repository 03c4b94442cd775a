#include "framework/actor.hpp"

namespace swarm {

actor::~actor() = default;

context& actor::actor_context() {
  if (ctx_ == nullptr)
    throw failure{{errc::invalid_argument,
                   "actor_context() called before the runtime started the actor "
                   "(e.g. from its constructor); use on_start()"}};
  return *ctx_;
}

const std::string& actor::actor_type_name() const {
  static const std::string none;
  return type_name_ ? *type_name_ : none;
}

} // namespace swarm
