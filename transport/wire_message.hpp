#pragma once

// The cross-node messages as plain C++ values. Nothing outside transport/ sees Cap'n
// Proto types; wire_codec converts.

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace swarm::wire_msg {

struct object_ref_id {
  uint64_t owner = 0;
  uint64_t seq = 0;
  friend bool operator==(const object_ref_id& a, const object_ref_id& b) {
    return a.owner == b.owner && a.seq == b.seq;
  }
};

struct value {
  std::string type_name;
  std::vector<uint8_t> bytes;
  friend bool operator==(const value& a, const value& b) {
    return a.type_name == b.type_name && a.bytes == b.bytes;
  }
};

struct error_value {
  uint16_t code = 0;
  std::string message;
  friend bool operator==(const error_value& a, const error_value& b) {
    return a.code == b.code && a.message == b.message;
  }
};

struct hello {
  std::string node;
  std::vector<uint8_t> nonce;
  uint32_t protocol = 0;
  /// Initiator only: the connection is for bulk traffic (see `endpoint`).
  bool bulk = false;
};

struct proof {
  std::vector<uint8_t> mac;
};

using resource_list = std::vector<std::pair<std::string, double>>;

/// Tasks on a node by priority: (priority, tasks queued for or at its workers and not
/// finished), highest priority first.
using priority_counts = std::vector<std::pair<int32_t, uint32_t>>;

/// A node's object store: bytes in use of its capacity, how many of them are copies
/// pulled from other nodes, the memory of freed values it keeps for new ones, and what
/// it spilled to disk.
struct store_usage {
  uint64_t bytes = 0;
  uint64_t capacity = 0;
  uint64_t pulled = 0;
  uint64_t pooled = 0;
  uint64_t pool_reuses = 0;
  uint64_t spilled = 0; ///< bytes of spill files now
  uint64_t spills = 0;  ///< objects moved to disk, since the node started
  uint64_t restores = 0;
  uint64_t hits = 0; ///< reads of other nodes' objects found here, since the start
  uint64_t misses = 0;
  uint64_t evictions = 0;
  friend bool operator==(const store_usage& a, const store_usage& b) {
    return a.bytes == b.bytes && a.capacity == b.capacity && a.pulled == b.pulled &&
           a.pooled == b.pooled && a.pool_reuses == b.pool_reuses &&
           a.spilled == b.spilled && a.spills == b.spills && a.restores == b.restores &&
           a.hits == b.hits && a.misses == b.misses && a.evictions == b.evictions;
  }
  friend bool operator!=(const store_usage& a, const store_usage& b) { return !(a == b); }
};

struct heartbeat {
  uint64_t sent_ns = 0;
  double load = 0;
  resource_list available;
  uint32_t queued = 0;
  store_usage store;
  uint32_t running = 0;
  priority_counts by_priority = {};
  /// Its node table missed a change: the head sends it the whole table.
  bool needs_table = false;
  /// It is stopping: the head places no more work there (what it has queued comes back
  /// to the owners).
  bool leaving = false;
};

/// A reference argument: the object, the node holding its value, and its size.
struct remote_ref {
  object_ref_id id;
  std::string node;
  uint64_t size = 0;
  /// Other nodes holding copies a reader may pull from instead, or as well.
  std::vector<std::string> holders = {};
  friend bool operator==(const remote_ref& a, const remote_ref& b) {
    return a.id == b.id && a.node == b.node && a.size == b.size && a.holders == b.holders;
  }
};

using arg = std::variant<value, remote_ref>;

struct task_submit {
  std::string function;
  std::vector<arg> args;
  object_ref_id result;
  resource_list resources;
  uint32_t max_retries = 0;
  bool retry_exceptions = false;
  int32_t priority = 0;
  std::string owner_node;
  bool placed = false;
  uint32_t replicas = 1;
  /// Non-zero: a streaming task, whose items the reader owns under this id.
  uint64_t stream_owner = 0;
  /// Items written ahead of what the reader took, at most.
  uint32_t stream_window = 0;
  /// On the control lane, and its result too.
  bool latency_critical = false;
  /// The job it belongs to, and the job's weight against other jobs.
  std::string job = {};
  double job_share = 1;
};

/// A result that stayed on the node that made it.
struct stored_at {
  std::string node;
  uint64_t size = 0;
  /// Other nodes keeping whole copies of it (`task_options::replicas`).
  std::vector<std::string> replicas = {};
};

struct task_result {
  object_ref_id result;
  std::variant<value, error_value, stored_at> outcome;
  /// Of a latency-critical task or call: on the control lane.
  bool latency_critical = false;
};

struct object_pull {
  object_ref_id id;
  uint64_t offset = 0;
  uint64_t length = 0;
};

struct object_chunk {
  object_ref_id id;
  uint64_t offset = 0;
  uint64_t total = 0;
  std::vector<uint8_t> data;
  std::string missing;
  /// When set, the chunk is the `source_length` bytes at `source_data` instead of `data`,
  /// kept alive by `source`: on the sending side the value's own memory (sent from
  /// there), on the receiving side the frame it arrived in (read there, not copied out)
  /// or, when `landed`, the value it was pulled for.
  std::shared_ptr<const void> source;
  const uint8_t* source_data = nullptr;
  uint64_t source_length = 0;
  /// Received straight into the destination its pull expected it at (a `landing_table`
  /// entry): its bytes are already where they belong.
  bool landed = false;
  /// Other nodes that have the object, or are getting it, which the puller may ask for
  /// later chunks (sent with the chunk at offset 0).
  std::vector<std::string> holders = {};
  /// With `missing`: this node is itself still getting those bytes; the puller asks
  /// another holder for them and may come back for later ones.
  bool not_yet = false;

  /// The chunk's bytes, wherever they are.
  const uint8_t* bytes() const noexcept { return source ? source_data : data.data(); }
  uint64_t size() const noexcept { return source ? source_length : data.size(); }
};

struct object_free {
  object_ref_id id;
};

/// The owner has the result of a task it ran on several nodes: the copy making `result`
/// here is dropped if it has not started.
struct task_cancel {
  object_ref_id result;
};

/// The head placed a task that another node owns on `node`: its owner follows it there,
/// so that the loss of `node` runs it again.
struct task_placed {
  object_ref_id result;
  std::string node;
};

/// Asks a node to keep a whole copy of `ref` (a replica), pulled from its holders.
struct object_replicate {
  remote_ref ref;
};

/// The answer to `object_replicate`: the replica is kept (`error` empty), or why not.
struct object_replicated {
  object_ref_id id;
  std::string error;
};

/// A task function or an actor type a node can run, by name, with its signature.
struct capability {
  std::string name;
  std::string signature;
  friend bool operator==(const capability& a, const capability& b) {
    return a.name == b.name && a.signature == b.signature;
  }
};

struct node_info {
  std::string name;
  std::string address;
  uint16_t port = 0;
  resource_list total;
  resource_list available;
  uint32_t queued = 0;
  bool alive = true;
  bool head = false;
  uint64_t last_seen_ms = 0;
  store_usage store;
  /// What it has registered: work needing anything else is placed elsewhere.
  std::vector<capability> functions;
  std::vector<capability> actor_types;
  uint32_t running = 0; ///< tasks running on its workers
  priority_counts by_priority = {};
  /// A program connected as a client (no row of the cluster file; runs no work).
  bool client = false;
  /// A client's owner index: its objects' ids carry it.
  uint32_t owner_index = 0;
  /// It is stopping: alive until it goes (its answers still come), but no work is
  /// placed there.
  bool leaving = false;
};

struct join {
  node_info node;
};

struct job_info {
  uint64_t id = 0;
  std::string driver;
  uint32_t pid = 0;
  bool running = true;
  uint64_t started_ms = 0;
  uint64_t ended_ms = 0;
};

/// What changes in a node's row between its joins: its state and its load.
struct node_change {
  std::string name;
  bool alive = true;
  uint64_t last_seen_ms = 0;
  resource_list available = {};
  uint32_t queued = 0;
  uint32_t running = 0;
  priority_counts by_priority = {};
  store_usage store = {};
  bool leaving = false;
};

/// The head's node table, versioned. `version` is the table's after this message; `base`
/// is the version it changes, or 0 when `nodes` is the whole table. A change carries
/// whole only the rows that are new or joined again (`nodes`), what changed in the
/// others (`changes`), and the rows that left (`removed`).
struct node_table {
  std::vector<node_info> nodes;
  std::vector<job_info> jobs;
  uint64_t version = 0;
  uint64_t base = 0;
  std::vector<node_change> changes = {};
  std::vector<std::string> removed = {};
};

struct object_location {
  object_ref_id id;
  std::string node;
  uint64_t size = 0;
  bool present = true;
};

struct status_request {
  uint64_t request_id = 0;
};

/// Asks a node what it runs or holds: `what` is "tasks", "actors", "objects",
/// "timeline", "logs", "summary" or "failures".
struct list_request {
  uint64_t request_id = 0;
  std::string what;
  uint32_t limit = 0; ///< at most this many rows; 0: all
};

/// One task, actor or object a node reports. A timeline row's `detail` is its track
/// ("worker 3", "actor NAME", "pulls from NODE") and its `numbers` are its kind
/// (`swarm::timeline_kind`), when it was queued (0: not known), started and ended (wall
/// clock, microseconds since the epoch), and the bytes it moved.
struct list_row {
  std::string id;
  std::string name;
  std::string state;
  std::string detail;
  std::vector<int64_t> numbers;

  bool operator==(const list_row& o) const {
    return id == o.id && name == o.name && state == o.state && detail == o.detail &&
           numbers == o.numbers;
  }
};

struct list_reply {
  uint64_t request_id = 0;
  std::string node;
  std::vector<list_row> rows;
  uint64_t total = 0; ///< rows there were before the request's limit
};

/// What a task or actor call printed on the node that ran it (`node`), for the node that
/// asked for it.
struct task_output {
  std::string function;
  std::string node;
  std::string text;
};

struct stop_request {
  std::string node;
  /// Why, when the head stops a node it refused (e.g. a join that conflicts).
  std::string reason;
};

struct actor_create {
  uint64_t request_id = 0;
  std::string type_name;
  std::vector<value> args;
  std::string name;
  resource_list resources;
  int32_t max_restarts = 0;
  std::string owner_node;
  bool placed = false;
  std::vector<uint8_t> checkpoint;
  uint32_t checkpoint_every = 0;
  bool durable_checkpoints = false;
  uint32_t max_concurrency = 0;
  uint32_t max_task_retries = 0;
};

struct actor_created {
  uint64_t request_id = 0;
  uint64_t actor_id = 0;
  std::string node;
  error_value error;
  bool ok = false;
};

struct actor_call {
  uint64_t actor_id = 0;
  std::string method;
  std::vector<arg> args;
  object_ref_id result;
  std::string caller_node;
  /// Non-zero: a streaming method, whose items the reader owns under this id.
  uint64_t stream_owner = 0;
  uint32_t stream_window = 0;
  /// On the control lane, and its result too.
  bool latency_critical = false;
  /// The actor's queued calls run highest first.
  int32_t priority = 0;
};

struct actor_register {
  uint64_t request_id = 0;
  std::string name;
  uint64_t actor_id = 0;
  std::string node;
  std::string type_name;
  uint32_t max_task_retries = 0;
};

struct actor_lookup {
  uint64_t request_id = 0;
  std::string name;
};

struct actor_location {
  uint64_t request_id = 0;
  bool found = false;
  uint64_t actor_id = 0;
  std::string node;
  std::string type_name;
  std::string error;
  /// The actor's `max_task_retries`: a handle found by name retries as the creator's.
  uint32_t max_task_retries = 0;
};

struct actor_kill {
  uint64_t actor_id = 0;
};

struct actor_checkpoint {
  uint64_t actor_id = 0;
  std::vector<uint8_t> state;
};

/// One message along a control-store shard's chain (chain replication): `sync` carries
/// the whole shard to a new chain, `write` one record, `ack` goes from the tail to the
/// head for every write up to `seq`, and `resync` asks the head for a new sync (a member
/// that lost its copy).
struct gcs_chain {
  enum class kind : uint8_t { sync = 0, write = 1, ack = 2, resync = 3 };
  uint32_t shard = 0;
  kind what = kind::write;
  uint64_t epoch = 0;
  uint64_t seq = 0;
  std::vector<std::string> members;
  std::vector<uint8_t> records;
};

/// A row of the control store's key-value table.
struct kv_entry {
  std::string key;
  std::vector<uint8_t> value;
  friend bool operator==(const kv_entry& a, const kv_entry& b) {
    return a.key == b.key && a.value == b.value;
  }
};

struct kv_request {
  enum class op_type : uint8_t { get = 0, put = 1, erase = 2 };
  uint64_t request_id = 0;
  op_type op = op_type::get;
  std::string key;
  std::vector<uint8_t> value;
};

struct kv_reply {
  uint64_t request_id = 0;
  bool found = false;
  std::vector<uint8_t> value;
  bool failed = false;
  error_value error;
};

/// A placement-group request for the head's global scheduler.
struct group_ask {
  enum class kind_type : uint8_t { create = 0, query = 1, remove = 2 };
  uint64_t request_id = 0;
  kind_type kind = kind_type::query;
  uint64_t id = 0;
  std::vector<resource_list> bundles; // create
  uint8_t strategy = 0;               // create: placement_strategy's value
};

/// The head's answer to a `group_ask`.
struct group_answer {
  uint64_t request_id = 0;
  bool ok = false;
  std::vector<std::string> nodes; // a placed group's node of each bundle
  std::vector<resource_list> bundles;
  error_value error;
};

/// The sender read a ref of an object the receiver owns, and keeps it while it holds it.
struct object_borrow {
  object_ref_id id;
};

/// The owner's answer to `object_borrow` (`ack`), and, for an object not made then, a
/// second one once it is.
struct object_borrowed {
  enum class state_type : uint8_t { pending = 0, ready = 1, failed = 2 };
  object_ref_id id;
  bool ack = false;
  state_type state = state_type::pending;
  arg value;         // ready: inline, or where to pull it from
  error_value error; // failed: why
};

/// The sender let go of one borrow of the object.
struct object_unborrow {
  object_ref_id id;
};

/// Item `seq` of the stream of the task or call whose result is `result`, from the node
/// running it to its reader's (`item.result` is the item's own id).
struct stream_item {
  object_ref_id result;
  uint64_t seq = 0;
  task_result item;
};

/// The reader took `taken` items of the stream of `result`: its writer may go on.
struct stream_ack {
  object_ref_id result;
  uint64_t taken = 0;
};

/// A program asks the head to join its cluster as a client.
struct client_ask {
  uint64_t request_id = 0;
};

/// The head's answer to a `client_ask`: the cluster as a node of it needs to know it,
/// and the client's owner index; or why not (`ok` false, `error`).
struct client_welcome {
  uint64_t request_id = 0;
  bool ok = false;
  std::string error;
  std::string cluster;
  uint32_t owner_index = 0;
  std::vector<node_info> nodes; ///< the file's nodes: name, address, port, head
  uint64_t heartbeat_ms = 0;
  uint64_t node_timeout_ms = 0;
  uint64_t join_wait_ms = 0;
  uint32_t gcs_shards = 1;
  uint32_t gcs_replication = 1;
  uint64_t inline_threshold = 0;
  uint64_t max_message_bytes = 0;
};

/// Runs a program on the head as a job of the cluster, its output kept there.
struct job_submit {
  uint64_t request_id = 0;
  std::vector<std::string> argv;
  std::string cwd; ///< empty: the head's
};

/// About submitted jobs: their rows (`id` 0: all), a job's output from `offset`, or
/// stop one.
struct job_ask {
  enum class kind_type : uint8_t { status = 0, output = 1, stop = 2 };
  uint64_t request_id = 0;
  kind_type kind = kind_type::status;
  uint64_t id = 0;
  uint64_t offset = 0;
};

/// A submitted job.
struct job_row {
  uint64_t id = 0;
  std::string command;
  uint32_t pid = 0;
  std::string state;     ///< running, succeeded, failed, stopped
  int32_t exit_code = 0; ///< or the signal that ended it, negated
  uint64_t started_ms = 0;
  uint64_t ended_ms = 0;
};

struct job_answer {
  uint64_t request_id = 0;
  bool ok = false;
  std::string error;
  std::vector<job_row> jobs = {};
  std::vector<uint8_t> output = {}; ///< a job's output from the offset asked
  uint64_t output_end = 0;          ///< the offset after it
};

/// Any message that crosses nodes.
using message = std::variant<
    hello, proof, heartbeat, task_submit, task_result, object_pull, object_chunk,
    object_free, join, node_table, status_request, stop_request, actor_create,
    actor_created, actor_call, actor_register, actor_lookup, actor_location, actor_kill,
    job_info, object_location, actor_checkpoint, gcs_chain, kv_entry, kv_request,
    kv_reply, list_request, list_reply, task_output, object_replicate, object_replicated,
    task_cancel, group_ask, group_answer, object_borrow, object_borrowed, object_unborrow,
    stream_item, stream_ack, client_ask, client_welcome, job_submit, job_ask, job_answer,
    task_placed>;

/// Traffic classes: control and calls are never queued behind bulk object transfers.
enum class lane : uint8_t { control = 0, call = 1, bulk = 2 };

/// The lane a message travels on.
lane lane_of(const message& m);

} // namespace swarm::wire_msg
