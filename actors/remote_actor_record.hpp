#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "framework/detail/actor_record.hpp"

namespace swarm::actors {

/// An actor on another node, as this node's handles see it.
class remote_actor_record final : public detail::actor_record {
public:
  remote_actor_record(detail::actor_spec spec, std::string node, uint64_t id)
      : actor_record(std::move(spec)), node_(std::move(node)), id_(id) {}

  const std::string& remote_node() const override { return node_; }
  uint64_t id() const noexcept { return id_; }

private:
  std::string node_;
  uint64_t id_;
};

} // namespace swarm::actors
