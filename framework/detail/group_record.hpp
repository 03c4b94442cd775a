#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "framework/detail/actor_record.hpp"

namespace swarm::detail {

/// The runtime's side of a running supervision tree: its actor children by id, and what
/// its supervisors did. When the last handle goes, the tree stops.
class group_record {
public:
  virtual ~group_record();

  /// The record of actor child `id` anywhere in the tree, or nullptr.
  actor_record_ptr child(const std::string& id) const {
    auto i = children_.find(id);
    return i == children_.end() ? nullptr : i->second;
  }

  /// Every child by id; nested supervisors map to nullptr.
  const std::map<std::string, actor_record_ptr>& children() const { return children_; }

  /// What the supervisors reported, oldest first: "start a", "restart a", "escalate", ...
  std::vector<std::string> events() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return events_;
  }

  /// Whether the root supervisor still runs (it stops on escalation).
  bool alive() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return alive_;
  }

  /// For the node: records an event of a supervisor in the tree.
  void record_event(const std::string& event, bool root_ended) {
    std::lock_guard<std::mutex> guard{mtx_};
    if (events_.size() < max_events) events_.push_back(event);
    if (root_ended) alive_ = false;
  }

protected:
  std::map<std::string, actor_record_ptr> children_;

private:
  static constexpr size_t max_events = 10000;
  // Guards events_ and alive_: supervisor actors record; handles read them on user
  // threads (actor_group::events, alive).
  mutable std::mutex mtx_;
  std::vector<std::string> events_;
  bool alive_ = true;
};

using group_record_ptr = std::shared_ptr<group_record>;

} // namespace swarm::detail
