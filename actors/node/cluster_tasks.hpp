#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "actors/node/node_link.hpp"
#include "actors/scheduling/spill_policy.hpp"

namespace swarm::actors {

/// A cluster node's tasks. Bottom-up scheduling: work runs here when this node can hold
/// it and its large inputs are here; otherwise it is spilled straight to a node chosen
/// from this node's view of the cluster (`spill_target`: a few nodes sampled, one with
/// room first, else the least busy, where it waits), or, when the sample holds none that
/// could run it, to the head's global scheduler, which knows every node and picks by
/// feasible resources, then bytes of inputs already there, then load.
/// The head's own spilled work goes to its global scheduler. A task sent elsewhere
/// becomes a child of the node's owner. Results small enough travel inline to their
/// owner; larger ones stay on the node that made them and are pulled in chunks by whoever
/// needs them.
class cluster_tasks {
public:
  /// `publish` writes a control-store row (on the head) or sends it there.
  cluster_tasks(node_link& link, std::function<void(wire_msg::message)> publish);

  /// Whether some node alive (or `node`) has `demand`; the error says which are dead.
  result<void> feasible(const resource_set& demand, const std::string& node,
                        const std::string& function = {});
  void submit(detail::task_ptr task);
  /// A task another node sent here: run here, or placed first when this is the head.
  void on_submit(wire_msg::task_submit m);
  /// A result the owner found stored on the node that made it: pulled into the task's
  /// future, which keeps the holder's copy while it lives.
  void pull_result(detail::task_ptr task, const wire_msg::stored_at& where);
  /// An item of a stream read here stayed where it was written: it is pulled into
  /// `slot`, weighted by `weight` (a lost item fails it: items are not made again).
  void pull_item(detail::slot_ptr slot, const detail::type_descriptor* type,
                 const wire_msg::stored_at& where, double weight);
  /// Tasks placed here, by this node or sent by others, and not finished.
  uint32_t queued() const { return static_cast<uint32_t>(local_inflight_.load()); }

private:
  using key = object_key;

  void run_locally(detail::task_ptr task);
  // Counts a task placed here in `queued` until `result` is done.
  void count_until_done(detail::object_slot& result);
  // Pulls the value `where` holds into `slot`, weighted by `weight` (`pull_weight`);
  // `failed` when it could not be read.
  void pull_into(const detail::slot_ptr& slot, const detail::type_descriptor* type,
                 const wire_msg::stored_at& where, double weight,
                 std::function<void(error)> failed);
  bool idle_elsewhere() const;
  // `task` as sent to another node; its arguments held here are added to `exported`.
  wire_msg::task_submit submit_message(const detail::task_spec& task, bool placed,
                                       std::vector<key>& exported);
  void send_task(detail::task_ptr task, const std::string& to, bool placed);
  // Sends `task` to the node `spill_target` picks (runs it here when that is `here`, this
  // node as a candidate when the task fits it), else to the head to be placed.
  void spill(detail::task_ptr task, std::optional<spill_candidate> here);
  // The node `task` (with `args` as sent) goes to, of `here` and the nodes this node's
  // view shows could run it, counting what this node spilled there since: one with room
  // first, else the least busy. Empty when none could run it.
  std::string spill_target(const detail::task_spec& task,
                           const std::vector<wire_msg::arg>& args,
                           const std::optional<spill_candidate>& here);
  // Up to `n` other alive nodes that can run `task`, least busy first.
  std::vector<std::string> nodes_for(const detail::task_spec& task, size_t n) const;
  // Sends a copy of `task` to each of `nodes`; the first result wins.
  void send_copies(detail::task_ptr task, std::vector<std::string> nodes);
  void forward_task(detail::task_ptr task, const std::string& to, wire_msg::task_submit m,
                    std::vector<key> exported);
  void place_and_forward(wire_msg::task_submit m);
  void run_task_here(wire_msg::task_submit m);

  node_link& link_;
  std::function<void(wire_msg::message)> publish_;
  // Past the threshold, new work may spill.
  std::atomic<size_t> local_inflight_{0};
  size_t spill_threshold_ = 1;
  // Nodes that could run it weighed for each spill, besides those holding its inputs,
  // found in at most `spill_probes` draws, which go on past `spill_sample` while none
  // has room (work few nodes can run is the head's to place when the draws miss them).
  static constexpr size_t spill_sample = 3;
  static constexpr size_t spill_probes = 16;
  std::atomic<uint64_t> spill_draws_;
  // The tasks this node spilled to each node since its view last changed: the room a
  // stale view shows is taken by the first of a burst, so the rest spread or go to the
  // head instead of all following the first. Made whole for each view, then only its
  // counters change: shared by the threads that spill without a lock.
  struct spill_marks {
    std::shared_ptr<const peer_table> view;
    std::map<std::string, std::atomic<uint32_t>> sent;
  };
  std::shared_ptr<spill_marks> marks_;
  std::shared_ptr<spill_marks> marks_for(const std::shared_ptr<const peer_table>& view);
};

} // namespace swarm::actors
