#include "actors/user_actors/local_group.hpp"

#include <caf/all.hpp>

namespace swarm::actors {

local_group::~local_group() {
  std::lock_guard<std::mutex> node_guard{node_->mtx};
  std::lock_guard<std::mutex> guard{mtx_};
  if (node_->alive && root_) caf::anon_send_exit(root_, caf::exit_reason::user_shutdown);
}

void local_group::set_root(caf::actor root) {
  std::lock_guard<std::mutex> guard{mtx_};
  root_ = std::move(root);
}

caf::actor local_group::root() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return root_;
}

void local_group::detach() {
  caf::actor dropped;
  std::lock_guard<std::mutex> guard{mtx_};
  dropped.swap(root_);
}

} // namespace swarm::actors
