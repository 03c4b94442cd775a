#include "framework/supervision.hpp"

#include <stdexcept>
#include <utility>

namespace swarm {

// -- restart_window -----------------------------------------------------------

restart_window::restart_window(restart_intensity limits) : limits_(limits) {}

void restart_window::expire(time_point now) {
  while (!restarts_.empty() && now - restarts_.front() >= limits_.period)
    restarts_.pop_front();
}

bool restart_window::allow(time_point now) {
  expire(now);
  if (restarts_.size() >= limits_.max_restarts) return false;
  restarts_.push_back(now);
  return true;
}

// -- supervisor_logic ---------------------------------------------------------

supervisor_logic::supervisor_logic(strategy how, restart_intensity limits,
                                   std::vector<child_policy> children)
    : how_(how), window_(limits) {
  children_.reserve(children.size());
  for (auto& policy : children) {
    if (index_of(policy.id))
      throw std::invalid_argument("duplicate child id: " + policy.id);
    children_.push_back(entry{std::move(policy), status::running});
  }
}

std::optional<size_t> supervisor_logic::index_of(const std::string& id) const {
  for (size_t i = 0; i < children_.size(); ++i)
    if (children_[i].policy.id == id) return i;
  return std::nullopt;
}

bool supervisor_logic::restarts(restart_type type, exit_kind how) {
  switch (type) {
  case restart_type::permanent:
    return true;
  case restart_type::transient:
    return how == exit_kind::failure;
  case restart_type::temporary:
    return false;
  }
  return false;
}

supervisor_decision supervisor_logic::on_child_exit(size_t index, exit_kind how,
                                                    time_point now) {
  supervisor_decision result;
  if (terminated_ || index >= children_.size() || !running(index)) return result;
  auto& failed = children_[index];
  if (!restarts(failed.policy.restart, how)) {
    failed.state = status::removed;
    result.remove.push_back(index);
    return result;
  }
  failed.state = status::stopped;
  if (!window_.allow(now)) {
    result.what = supervisor_decision::action::escalate;
    result.stop = shutdown();
    return result;
  }
  result.what = supervisor_decision::action::restart;
  plan_restart(index, how_ == strategy::one_for_all ? 0 : index, result);
  return result;
}

void supervisor_logic::plan_restart(size_t failed, size_t first,
                                    supervisor_decision& out) {
  if (how_ != strategy::one_for_one) {
    for (size_t i = children_.size(); i-- > first;) {
      auto& x = children_[i];
      if (i == failed || x.state != status::running) continue;
      out.stop.push_back(i);
      // As in OTP, a temporary child stopped by a group restart is gone for good.
      if (x.policy.restart == restart_type::temporary) {
        x.state = status::removed;
        out.remove.push_back(i);
      } else {
        x.state = status::stopped;
      }
    }
  }
  const auto last = how_ == strategy::one_for_one ? failed + 1 : children_.size();
  for (size_t i = first; i < last; ++i) {
    if (children_[i].state == status::stopped) {
      children_[i].state = status::running;
      out.start.push_back(i);
    }
  }
}

std::vector<size_t> supervisor_logic::shutdown() {
  terminated_ = true;
  std::vector<size_t> result;
  for (size_t i = children_.size(); i-- > 0;) {
    if (children_[i].state == status::running) {
      children_[i].state = status::stopped;
      result.push_back(i);
    }
  }
  return result;
}

// -- to_string ----------------------------------------------------------------

const char* to_string(strategy x) {
  switch (x) {
  case strategy::one_for_one:
    return "one_for_one";
  case strategy::one_for_all:
    return "one_for_all";
  case strategy::rest_for_one:
    return "rest_for_one";
  }
  return "?";
}

const char* to_string(restart_type x) {
  switch (x) {
  case restart_type::permanent:
    return "permanent";
  case restart_type::transient:
    return "transient";
  case restart_type::temporary:
    return "temporary";
  }
  return "?";
}

const char* to_string(exit_kind x) {
  switch (x) {
  case exit_kind::normal:
    return "normal";
  case exit_kind::shutdown:
    return "shutdown";
  case exit_kind::failure:
    return "failure";
  }
  return "?";
}

} // namespace swarm
