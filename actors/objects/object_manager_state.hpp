#pragma once

// The object manager's state, owned by its actor (object_manager.cpp): what it holds for
// other nodes, the pulls it runs (object_manager_pulls.cpp), the results located
// elsewhere, replicas and hand-overs. Only the object manager's sources include this.

#include <caf/actor_control_block.hpp>
#include <caf/typed_response_promise.hpp>
#include <caf/weak_intrusive_ptr.hpp>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "actors/objects/device_lending.hpp"
#include "actors/objects/hand_over_table.hpp"
#include "actors/objects/object_manager.hpp"
#include "actors/objects/pull_state.hpp"
#include "actors/objects/pulled_copies.hpp"
#include "actors/objects/replication_table.hpp"

namespace swarm::actors {

using value_cb = std::function<void(result<detail::boxed_value>)>;

// Other readers a holder names to a puller, and sources a pull asks at once, at most.
inline constexpr size_t max_hinted = 8;
inline constexpr size_t max_striped = 4;

struct held_object {
  detail::boxed_value value;
  std::shared_ptr<const bulk_layout> layout;
  size_t exports = 0; // tasks on other nodes that may still pull it; 0: owned result
  std::shared_ptr<const void> keep;
  bool replicated = false; // kept for its replicas until this node's store lets go
};

struct object_manager_state {
  object_manager_config cfg;
  std::unique_ptr<replication_table> replicas; // made with `cfg`
  std::map<object_key, held_object> held;
  std::map<object_key, pull_state> pulls;
  std::unique_ptr<pulled_copies> copies_here; // made with `cfg`
  std::map<object_key, located_object> located;
  // Nodes sent chunks of an object held here, which may keep copies of it: told to drop
  // them when this node's store lets go of it.
  std::map<object_key, std::set<std::string>> copies;
  std::deque<transfer_event> transfers; // the last pulls that ended, oldest first
  hand_over_table hand_over;
  std::unique_ptr<device_lending> lending; // made with `cfg`
  // The manager itself: a buffer mapped here tells it when it goes, whenever that is.
  caf::weak_actor_ptr self;
  // This node stops: answered once every owner took what it held for them.
  std::optional<caf::typed_response_promise<uint64_t>> handing;

  std::string id_of(const object_key& k) const;

  // Why object `k`, held on the dead node `holder`, cannot be read.
  error lost_error(const object_key& k, const std::string& holder,
                   const std::string& why) const;

  void hold(hold_request& r);

  void release(const std::vector<object_key>& keys);

  // A pulled copy of `k` still alive here: kept, else remembered; no value when none is.
  pulled_copy copy_here(const object_key& k) const;

  // A pulled copy of `k` still alive here, laid out to be served; null when none is.
  std::shared_ptr<served_layout> copy_layout(const object_key& k) const;

  // Sends `peer` what it asked for of an object: from a value held here, a pulled copy
  // alive here, or the part of a pull running here that came in; a pull here that has
  // not got those bytes yet keeps the ask until they come when they were asked of a
  // whole copy, and otherwise sends the reader elsewhere. The chunk at offset 0 names the
  // other nodes this one sent parts of the object to, which the reader may ask as well.
  void serve(const std::string& peer, const wire_msg::object_pull& m);

  // The value of object `k` this node holds, or a pulled copy alive here; null when none.
  std::optional<detail::boxed_value> value_here(const object_key& k) const;

  // `peer` answered this node's ask to share a device buffer: mapped here, or its bytes
  // pulled.
  void on_share(const std::string& peer, const wire_msg::device_share& m);

  // Serves the asks kept for bytes of `p` that came since.
  void serve_parked(pull_state& p);

  void ask(const object_key& k, pull_state& p, uint64_t offset, uint64_t len,
           const pull_source& from);

  // Asks again for the chunk at `offset`, which `failed` could not send, of a source
  // with the whole object; false when none is left.
  bool ask_again(const object_key& k, pull_state& p, uint64_t offset, uint64_t len,
                 const std::string& failed);

  // Stops asking `node` for parts of `p`; what it was asked for is asked of another
  // source. False when no source with the whole object is left for it.
  bool drop_source(const object_key& k, pull_state& p, const std::string& node);

  // Once the value is made: the chunk asked of `from` at `offset` is received into the
  // block it starts in (a holder cuts it where that block ends).
  void await_landing(const object_key& k, pull_state& p, uint64_t offset, uint64_t len,
                     const std::string& from);

  // How many times its base window `p` asks for: its weight over the lightest pull's
  // here, rounded, from 1 to `max_pull_scale`.
  size_t scale_of(const pull_state& p) const;

  // Asks for the next chunks, each of the next source in turn, up to `pull_window` per
  // source (four sources at most), times `scale_of(p)`, in flight.
  void request_chunks(const object_key& k, pull_state& p);

  // Counts a pull of `bytes` against the store, dropping kept copies to make room.
  result<std::unique_ptr<detail::store_lease>> reserve(const object_key& k,
                                                       uint64_t bytes);

  // Where to pull `ref` from: the node named first and the other holders, less loaded
  // first (the named one on a tie), this node never.
  std::vector<pull_source> sources_of(const wire_msg::remote_ref& ref) const;

  // `v` as a `type`: itself, or made from its bytes when it is a replica's (`v.type`
  // null); the copy made is counted against the store and kept for other readers here
  // while it lives.
  result<detail::boxed_value> as_type(const object_key& k, const detail::boxed_value& v,
                                      const detail::type_descriptor* type);

  // `v`, counted against the store by `lease` while anyone holds it (the lease lives in
  // its control block).
  static std::shared_ptr<const void>
  with_lease(std::shared_ptr<const void> v, std::unique_ptr<detail::store_lease> lease);

  // Reads `r.ref` as `r.type`, or as its layout's bytes when `r.type` is null (to keep a
  // replica: no value is made).
  void fetch(fetch_request& r);

  // Holds `r.hold` here, and asks other nodes to keep replicas of it.
  void replicate(replicate_request& r);

  // Freed here: the replicas kept from here, and the copies of the readers this node
  // sent parts of it to, go too.
  void drop_copies(const object_key& k);

  // Keeps a replica of `m.ref` for `peer`, which hears back once it is kept or why not.
  void keep_replica(const std::string& peer, const wire_msg::object_replicate& m);

  // Ends the pull of `k`, handing `out` to each of its readers; asks other readers kept
  // waiting on it are served from the copy kept, or told it is gone.
  void finish(std::map<object_key, pull_state>::iterator i,
              const result<detail::boxed_value>& out);

  // The result `l` names stayed on another node: this node's own copy of it is the
  // primary now.
  void primary_here(std::map<object_key, located_object>::iterator l);

  // This node stops: it hands the results it holds for owners elsewhere over to them.
  void hand_over_held();

  // Node `peer`, which stops, hands over the results it holds for this node: answered
  // for at once, or once this node's pull of one from there ended.
  void take_over(const std::string& peer, const wire_msg::objects_hand_over& m);

  void answer_hand_over();

  // Makes the value once the bytes received from offset 0 on hold its whole head; then
  // places what came. An error when the head is malformed.
  std::optional<error> try_make_value(const object_key& k, pull_state& p);

  void on_chunk(const std::string& peer, wire_msg::object_chunk& m);

  void forget(const object_key& k);

  void lost(const std::string& peer, const std::string& why);
};

} // namespace swarm::actors
