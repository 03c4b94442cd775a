#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "transport/wire_message.hpp"

namespace swarm::actors {

/// The replicas a node asked other nodes to keep of objects it holds: whom it asked,
/// who keeps one, who refused or was lost. Owned by the object manager, on its thread.
class replication_table {
public:
  using key = std::pair<uint64_t, uint64_t>;
  /// Called once no replica asked for is pending, with the nodes keeping one.
  using done_fn = std::function<void(std::vector<std::string>)>;

  struct config {
    /// This node's name.
    std::string node;
    /// Up to `n` alive nodes other than this one and `exclude`, least busy first.
    std::function<std::vector<std::string>(size_t n,
                                           const std::set<std::string>& exclude)>
        pick;
    /// Sends a message to a node; never blocks.
    std::function<void(const std::string&, wire_msg::message)> send;
  };

  explicit replication_table(config cfg) : cfg_(std::move(cfg)) {}

  /// Keeps `object` (of `size` bytes, held here) on `copies` other nodes, `avoid` only
  /// when no other is left; `done` (may be empty) runs once those asked answered.
  void start(const key& object, uint64_t size, uint32_t copies, done_fn done,
             std::string avoid = {});

  /// `peer` answered: it keeps a replica (`error` empty) or cannot. A replica of an
  /// object no longer replicated here is dropped there again.
  void answered(const std::string& peer, const key& object, const std::string& error);

  /// `peer` is gone: the replicas it kept or was asked for are asked of other nodes.
  void lost(const std::string& peer);

  /// The object is freed here: the nodes keeping replicas drop them.
  void drop(const key& object);

private:
  struct entry {
    uint32_t want = 0;
    uint64_t size = 0;
    std::string avoid;
    std::set<std::string> kept, pending, refused;
    std::vector<done_fn> done;
  };

  void top_up(const key& object, entry& e);

  config cfg_;
  std::map<key, entry> table_;
};

} // namespace swarm::actors
