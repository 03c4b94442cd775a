#pragma once

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "actors/common/protocol.hpp"
#include "actors/objects/object_manager.hpp" // object_key
#include "actors/ownership/protocol.hpp"
#include "framework/detail/stream_channel.hpp"
#include "transport/wire_message.hpp"

namespace swarm::actors {

/// The node's streams written here for readers on other nodes, by the key of their
/// task's result: a reader's `stream_ack` finds its writer.
///   (put_atom, key, sender)       a streaming task or call starts here
///   (stream_atom, key, taken)     its reader took `taken` items: room for more
///   (erase_atom, key)             it ended
using stream_senders_actor = caf::typed_actor<
    caf::reacts_to<put_atom, object_key, std::weak_ptr<detail::stream_sink>>,
    caf::reacts_to<stream_atom, object_key, uint64_t>,
    caf::reacts_to<erase_atom, object_key>>;

stream_senders_actor spawn_stream_senders(caf::actor_system& sys);

/// What a stream sender needs of its node.
struct stream_route {
  /// Sends a message to the reader's node.
  std::function<void(wire_msg::message)> send;
  /// Whether the reader's node is still reachable.
  std::function<bool()> connected;
  /// The item valued `v` as it travels: inline when small, otherwise held here as `k`
  /// for the reader to pull.
  std::function<wire_msg::task_result(const object_id& id, const detail::boxed_value& v)>
      travel;
  /// Called when the sender goes.
  std::function<void()> ended;
};

/// Where a streaming task or call run here for a reader on another node writes its
/// items: each goes to the reader's node as a `stream_item`, at most `window` of them
/// ahead of what the reader took (`stream_ack`).
class stream_sender final : public detail::stream_sink {
public:
  stream_sender(stream_route route, object_id result, uint64_t items_owner,
                size_t window);
  ~stream_sender() override;

  result<void> write(uint64_t seq, detail::boxed_value v,
                     const std::atomic<bool>& cancelled) override;
  void taken(uint64_t taken) override;

private:
  stream_route route_;
  const object_id result_;
  const uint64_t items_owner_;
  const size_t window_;
  // Guards taken_ (with cv_): the task's thread blocks in write() for room, which the
  // stream_senders actor reports (taken); a credit wait that blocks a task thread.
  std::mutex mtx_;
  std::condition_variable cv_;
  uint64_t taken_ = 0;
};

} // namespace swarm::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::weak_ptr<swarm::detail::stream_sink>)
