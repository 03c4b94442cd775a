#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "actors/objects/protocol.hpp"
#include "base/result.hpp"
#include "framework/detail/device_memory.hpp"
#include "framework/detail/type_descriptor.hpp"
#include "transport/wire_message.hpp"

namespace swarm::actors {

/// Device buffers passed between node processes of one host by mapping their device
/// memory (CUDA IPC), not through host memory and the bulk path. A reader asks the
/// holder to share (an `object_pull` naming its host); the holder answers with a handle
/// (`device_share`) and keeps the buffer's value, and with it its device memory, until
/// the reader unmaps it (`device_released`) or the reader's connection closes. Owned by
/// the object manager.
class device_lending {
public:
  /// `devices`: this node's GPUs; null when it neither lends nor maps device memory.
  device_lending(std::string node, std::shared_ptr<detail::device_memory> devices);

  /// The host a pull names to be answered by a share; empty when this node maps none.
  const std::string& host() const noexcept { return host_; }

  /// Whether a pull of a value of `type` asks for a share first.
  bool asks_share(const detail::type_descriptor* type) const;

  /// The answer to `peer` asking, from `reader_host`, to map object `k`, whose value
  /// here is `v` (null: none is): a handle, lent until `released`; or why not.
  wire_msg::device_share lend(const std::string& peer, const object_key& k,
                              const detail::boxed_value* v,
                              const std::string& reader_host);

  /// `peer` unmapped what it was lent of `k` once.
  void released(const std::string& peer, const object_key& k);

  /// `peer`'s connection closed: what it was lent goes back.
  void lost(const std::string& peer);

  /// The shared buffer `m` names, mapped here as a device buffer; `released` runs once
  /// it is unmapped.
  result<detail::boxed_value> map(const wire_msg::device_share& m,
                                  std::function<void()> released);

private:
  std::string node_;
  std::shared_ptr<detail::device_memory> devices_;
  std::string host_;
  std::map<std::pair<std::string, object_key>, std::vector<detail::boxed_value>> lent_;
};

} // namespace swarm::actors
