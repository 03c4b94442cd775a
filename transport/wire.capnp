@0xa4b43ad4c941e159;
# Every message that crosses nodes, written here only. Append-only: fields and union members
# only ever get new ordinals; none is renumbered or removed, and a default that changes is
# a new `protocol_version` (transport/handshake.hpp). Inside a node, messages are plain C++
# values (the generated transport/wire_message.hpp); conversion happens only in transport/.
# A comment inside a struct, or after a field, is its C++ documentation too.

$import "/capnp/c++.capnp".namespace("swarm::wire");

# How each message looks in C++, where the schema alone does not say: see cxx.capnp.
# The C++ types, codec and lanes are generated from this file (transport/codegen).
using Cxx = import "cxx.capnp";

struct ObjectId $Cxx.name("object_ref_id") {
  owner @0 :UInt64;
  seq @1 :UInt64;
}

struct Value {
  # A value in its `inspect` encoding, named by its type so the receiver can check it.
  typeName @0 :Text;
  bytes @1 :Data;
}

struct ErrorValue {
  code @0 :UInt16;     # swarm::errc
  message @1 :Text;
}

struct Resource $Cxx.pairList("resource_list") {
  name @0 :Text;
  amount @1 :Float64;
}

struct Hello {
  # First message on a connection, both ways.
  node @0 :Text;
  nonce @1 :Data;      # 32 random bytes
  protocol @2 :UInt32;
  bulk @3 :Bool;       # initiator only: the connection carries bulk traffic (object pulls)
}

struct Proof {
  # Second message: HMAC-SHA256 keyed by the secret over the sender's role, both nonces, both
  # names and the acceptor's address (transport/handshake.hpp). The initiator proves first.
  mac @0 :Data;
}

struct Goodbye {
  # The sender closes this connection, idle on its side: the receiver stops sending on it
  # (what it sends next dials again) and closes its side once its queue is out. Not a
  # node's loss: neither side reports the peer down.
  reason @0 :Text;
}

struct StoreUsage {
  bytes @0 :UInt64;
  capacity @1 :UInt64;
  pulled @2 :UInt64;     # of `bytes`: copies pulled from other nodes
  pooled @3 :UInt64;     # beside `bytes`: freed values' memory kept for new ones
  poolReuses @4 :UInt64; # new values made in kept memory, since the node started
  spilled @5 :UInt64;    # bytes of spill files now
  spills @6 :UInt64;     # objects moved to disk, since the node started
  restores @7 :UInt64;   # spilled objects read back into memory, since then
  hits @8 :UInt64;       # reads of other nodes' objects found here, since then
  misses @9 :UInt64;     # reads of other nodes' objects that pulled them
  evictions @10 :UInt64; # kept copies dropped to make room
}

struct Heartbeat {
  sentNs @0 :UInt64;
  load @1 :Float64;
  available @2 :List(Resource);
  queued @3 :UInt32;
  store @4 :StoreUsage;
  running @5 :UInt32;    # tasks running on its workers now
  byPriority @6 :List(PriorityCount);
  needsTable @7 :Bool;   # its node table missed a change: the head sends it whole
  leaving @8 :Bool;      # it is stopping: the head places no more work there
  incarnation @9 :UInt64; # the life of the node that sends it (NodeInfo.incarnation)
  wantsLoad @10 :Bool;   # it places work by the nodes' loads: the head sends it their
                         # changes (else only changes of state: joins, deaths, leaving)
  kvPlacement @11 :UInt64; # the version of the key-value shards' placement it holds
}

struct PriorityCount $Cxx.pairList("priority_counts") {
  # Tasks of one priority on a node, queued for or at its workers and not finished.
  priority @0 :Int32;
  tasks @1 :UInt32;
}

struct Arg $Cxx.variant("arg") {
  union {
    value @0 :Value;
    ref @1 :ObjectId $Cxx.alternative("remote_ref") $Cxx.name("id");
  }
  node @2 :Text;       # for a ref: the node holding the value
  size @3 :UInt64;     # for a ref: its encoded bytes
  holders @4 :List(Text);  # for a ref: other nodes holding copies
}

struct TaskSubmit $Cxx.lane(call) {
  function @0 :Text;
  args @1 :List(Arg);
  result @2 :ObjectId;
  resources @3 :List(Resource);
  maxRetries @4 :UInt32;
  retryExceptions @5 :Bool;
  priority @6 :Int32;
  ownerNode @7 :Text;  # where the result goes
  placed @8 :Bool;     # chosen by the global scheduler: run here, do not spill again
  replicas @9 :UInt32 = 1; # nodes to keep the result on (0 or 1: the one that made it)
  streamOwner @10 :UInt64;  # non-zero: a streaming task, its items owned by this id
  streamWindow @11 :UInt32; # items written ahead of what the reader took, at most
  latencyCritical @12 :Bool $Cxx.controlWhenSet; # on the control lane, and its result too
  job @13 :Text;            # the job it belongs to (empty: the default job)
  jobShare @14 :Float64 = 1;    # its job's weight against other jobs
  avoid @15 :List(Text);    # nodes its owner lost it on: placed elsewhere when it can be
}

struct StoredAt {
  # A result too large to travel inline stays on the node that made it.
  node @0 :Text;
  size @1 :UInt64;
  replicas @2 :List(Text);  # other nodes keeping whole copies
}

struct TaskResult $Cxx.unionField("outcome") $Cxx.lane(call) {
  result @0 :ObjectId;
  union {
    value @1 :Value;
    error @2 :ErrorValue;
    stored @3 :StoredAt;
  }
  latencyCritical @4 :Bool $Cxx.controlWhenSet; # the result of a latency-critical task or call: control lane
  actorId @5 :UInt64;  # an actor call's: the instance that ran it (0: a task's result)
  life @6 :UInt64;     # the life (incarnation) of the node that ran it; 0: not said
  state @7 :Data;      # a call from the actor's owner: the state saved with its effect,
  stateSeq @8 :UInt64; # and its number (0: none). The owner keeps it before the answer
                       # counts: a state sent apart could be lost while the answer came
}

struct ObjectPull $Cxx.lane(bulk) {
  id @0 :ObjectId;
  offset @1 :UInt64;
  length @2 :UInt64;
  readerHost @3 :Text; # non-empty: the reader is a node process of the host this names
                       # and maps device memory shared with it: a device buffer held on a
                       # device is answered with DeviceShare, not bytes
}

struct DeviceShare $Cxx.lane(bulk) {
  # The answer to an ObjectPull with readerHost, for a device buffer: a handle the reader
  # maps the holder's device memory by (CUDA IPC), or why there is none (the reader then
  # pulls its bytes). The holder keeps the memory until the reader sends DeviceReleased,
  # or its connection closes.
  id @0 :ObjectId;
  device @1 :Text;     # the device's UUID
  handle @2 :Data;     # empty: not shared, see refused
  size @3 :UInt64;
  refused @4 :Text;
}

struct DeviceReleased $Cxx.lane(bulk) {
  # The reader unmapped the device memory a DeviceShare lent it.
  id @0 :ObjectId;
}

struct ObjectChunk $Cxx.lane(bulk) {
  id @0 :ObjectId;
  offset @1 :UInt64;
  total @2 :UInt64;
  data @3 :Data $Cxx.rawTail("chunk_payload");
  missing @4 :Text;    # non-empty: the holder has no such object, and why
  holders @5 :List(Text);  # other nodes that have, or are getting, the object
  notYet @6 :Bool;     # with missing: a copy still coming here; ask another holder
  ownerGone @7 :Bool;  # with missing: its owner was an earlier life of this node
}

struct TaskCancel {
  # The owner has the result of a task run on several nodes: a copy not started is dropped.
  result @0 :ObjectId;
}

struct TaskPlaced {
  # The head placed a task another node owns on `node`: its owner follows it there, so
  # that the loss of `node` runs it again.
  result @0 :ObjectId;
  node @1 :Text;
  incarnation @2 :UInt64;  # of `node` when the head placed it there (0: not known)
}

struct ObjectReplicate {
  # Asks a node to keep a whole copy of an object (a replica), pulled from the holders.
  ref @0 :Arg $Cxx.only("ref");
}

struct ObjectReplicated {
  # The answer: the replica is kept, or why not.
  id @0 :ObjectId;
  error @1 :Text;      # empty: kept
}

struct ObjectsHandOver $Cxx.lane(call) {
  # A node that stops, to the owner of results it holds (behind their TaskResults): the
  # owner's own copies are their primaries now. The owner answers with ObjectsTaken once
  # it needs none of them from the sender (its pulls of them ended); the node waits for
  # that, bounded, before it goes.
  ids @0 :List(ObjectId);
}

struct ObjectsTaken $Cxx.lane(call) {
  # The owner's answer to ObjectsHandOver, for those of the objects it needs no more from
  # the node that stops.
  ids @0 :List(ObjectId);
}

struct ObjectFree {
  # The owner dropped its last reference: the holder may free the value.
  id @0 :ObjectId;
}

struct NodeInfo {
  name @0 :Text;
  address @1 :Text;
  port @2 :UInt16;
  total @3 :List(Resource);
  available @4 :List(Resource);
  queued @5 :UInt32;
  alive @6 :Bool = true;
  head @7 :Bool;
  lastSeenMs @8 :UInt64;  # since the head last heard from it
  store @9 :StoreUsage;
  functions @10 :List(Capability);   # what it can run
  actorTypes @11 :List(Capability);
  running @12 :UInt32;               # tasks running on its workers now
  byPriority @13 :List(PriorityCount);
  client @14 :Bool;        # a program connected as a client: no file row, runs no work
  ownerIndex @15 :UInt32;  # one not in the file: the owner index its objects' ids carry
  leaving @16 :Bool;       # stopping: alive until it goes, but no work is placed there
  incarnation @17 :UInt64; # when its process started (ms since the epoch): a node back
                           # under its name is a new incarnation
  nodeType @18 :Text;      # the autoscaler's node type it was started as (empty: none)
  stopReport @19 :Text;    # what it said it did as it stopped last (NodeStopped)
}

struct Capability {
  # A task function or actor type, with its signature.
  name @0 :Text;
  signature @1 :Text;
}

struct Join {
  # A node joins the head's node table.
  node @0 :NodeInfo;
  # The key-value placement the node holds (version 0: none): a head started again
  # takes the newest its nodes hold, so that each shard stays where its copies are.
  placement @1 :KvPlacement;
  # The lives of other nodes its table shows dead: a head started again fences them as
  # the head that found them dead did (their work and actors went elsewhere).
  dead @2 :List(NodeLife);
  # The life of the head whose table it holds (0: none yet). A head of another life holds
  # the join while it gathers its file's nodes (until all joined, or its node timeout
  # passed), so that it knows an earlier head's verdicts before it takes a life back.
  headLife @3 :UInt64;
}

struct NodeLife {
  # One life of a node: its name and incarnation.
  name @0 :Text;
  incarnation @1 :UInt64;
}

struct NodeTable {
  # The head's node table, versioned: `version` is the table's after this message, `base`
  # the version it changes (0: `nodes` is the whole table). A change lists whole only the
  # rows that are new or joined again; of the others, what changed (`changes`) or that
  # they left (`removed`).
  nodes @0 :List(NodeInfo);
  jobs @1 :List(JobInfo);
  version @2 :UInt64;
  base @3 :UInt64;
  changes @4 :List(NodeChange);
  removed @5 :List(Text);
  launches @6 :List(NodeLaunch);  # in an answer to `swarm status`: the autoscaler's nodes
  kvShards @7 :List(ShardChain);  # in an answer to `swarm status`: where the key-value
                                  # table's shards are served (cluster.gcs_hosts > 1)
}

struct NodeLaunch {
  # A node the head's autoscaler started, or a node type whose launch failed last.
  name @0 :Text;
  type @1 :Text;
  state @2 :Text;     # starting, up, stopping, failed
  why @3 :Text;       # why it started or stops; how the launch failed
  sinceMs @4 :UInt64; # how long it has been in that state
}

struct NodeChange {
  # What changes in a node's row between its joins: its state and its load.
  name @0 :Text;
  alive @1 :Bool = true;
  lastSeenMs @2 :UInt64;
  available @3 :List(Resource);
  queued @4 :UInt32;
  running @5 :UInt32;
  byPriority @6 :List(PriorityCount);
  store @7 :StoreUsage;
  leaving @8 :Bool;
}

struct NodeStopped {
  # A node that stops, to the head, before its connections close: what it does with what
  # it held (the head keeps it in the node's row for `swarm stop` and `swarm status`).
  report @0 :Text;
}

struct ActorsMoving {
  # A node that stops, to the owner of actors it hosts, before they stop with it: they
  # move. The owner restarts them elsewhere when its connection closes, and a move uses
  # none of their `max_restarts` (as a drain in Ray uses none).
  actorIds @0 :List(UInt64);
}

struct JobInfo {
  # A driver program's row in the control store's job table.
  id @0 :UInt64;
  driver @1 :Text;     # the node the driver runs on
  pid @2 :UInt32;
  running @3 :Bool = true;
  startedMs @4 :UInt64; # wall clock, ms since the epoch
  endedMs @5 :UInt64;
}

struct ObjectLocation {
  # A row of the control store's object table: where an object lives other than with its
  # owner (`present` false: it is gone from there).
  id @0 :ObjectId;
  node @1 :Text;
  size @2 :UInt64;
  present @3 :Bool = true;
}

struct StatusRequest {
  requestId @0 :UInt64;
}

struct ListRequest {
  # What a node runs or holds (`swarm list`): what is "tasks", "actors" or "objects".
  requestId @0 :UInt64;
  what @1 :Text;
  limit @2 :UInt32;   # at most this many rows; 0: all
}

struct ListRow {
  id @0 :Text;
  name @1 :Text;
  state @2 :Text;
  detail @3 :Text;
  numbers @4 :List(Int64);  # a timeline event: kind, queued, started, ended (us), bytes
}

struct TaskOutput {
  # What a task or actor call printed (context::print) on the node that ran it, for the
  # node that asked for it, which prints it.
  function @0 :Text;
  node @1 :Text;       # where it ran
  text @2 :Text;
}

struct ListReply {
  requestId @0 :UInt64;
  node @1 :Text;
  rows @2 :List(ListRow);
  total @3 :UInt64;   # rows there were before the limit
}

struct NodeFenced {
  # The head found this life of the node dead: others took over its work and restarted
  # the actors it hosted for them. It stops those instances and joins as a new life.
  incarnation @0 :UInt64;  # the life found dead
  reason @1 :Text;
}

struct StopRequest {
  # Stops one node, or every node when `node` is empty.
  node @0 :Text;
  reason @1 :Text;   # set when the head refuses the node
}

struct ActorCreate {
  requestId @0 :UInt64;
  typeName @1 :Text;
  args @2 :List(Value);
  name @3 :Text;
  resources @4 :List(Resource);
  maxRestarts @5 :Int32;
  ownerNode @6 :Text;
  placed @7 :Bool;
  checkpoint @8 :Data;       # the state to restore (a restart on another node)
  checkpointEvery @9 :UInt32;
  durableCheckpoints @10 :Bool;  # each state saved also goes to the control store
  maxConcurrency @11 :UInt32;    # calls that returned futures waiting at once
  maxTaskRetries @12 :UInt32;    # a call lost with its node is sent again this often
  life @13 :UInt64;  # the life (incarnation) of the node it is meant for, as the sender
                     # saw it: a later life refuses it (0: any)
  answersKept @14 :UInt32;  # the last calls' answers kept in each state (exactly once)
}

struct ActorCreated {
  requestId @0 :UInt64;
  actorId @1 :UInt64;
  node @2 :Text;
  error @3 :ErrorValue;
  ok @4 :Bool;
}

struct ActorCheckpoint {
  # A state an actor saved, sent by its node to its owner.
  actorId @0 :UInt64;
  state @1 :Data;
  seq @2 :UInt64;    # its number: each instance numbers its states 1, 2, ...
  answer @3 :Bool;   # the owner answers with ActorCheckpointTaken
}

struct ActorCheckpointTaken {
  # The owner's answer to an ActorCheckpoint that asked for one: it holds that state or a
  # later one (`taken`), or it does not, as the instance that sent it was replaced (its
  # owner restarted it elsewhere). The answer to a caller other than the owner waits
  # for it.
  actorId @0 :UInt64;
  seq @1 :UInt64;
  taken @2 :Bool;
}

struct ActorCall $Cxx.lane(call) {
  actorId @0 :UInt64;
  method @1 :Text;
  args @2 :List(Arg);
  result @3 :ObjectId;
  callerNode @4 :Text;
  streamOwner @5 :UInt64;   # non-zero: a streaming method, its items owned by this id
  streamWindow @6 :UInt32;  # items written ahead of what the reader took, at most
  latencyCritical @7 :Bool $Cxx.controlWhenSet; # on the control lane, and its result too
  priority @8 :Int32;       # queued calls of the actor run highest first
}

struct ActorRegister {
  # Named-actor table of the control store: register, look up, answer.
  requestId @0 :UInt64;
  name @1 :Text;
  actorId @2 :UInt64;
  node @3 :Text;
  typeName @4 :Text;
  maxTaskRetries @5 :UInt32;
}

struct ActorLookup {
  requestId @0 :UInt64;
  name @1 :Text;
  actorId @2 :UInt64;  # without a name, asked of its owner: the instance that was
  node @3 :Text;       # `actorId` on `node`, and where the owner restarted it
}

struct ActorLocation {
  requestId @0 :UInt64;
  found @1 :Bool;
  actorId @2 :UInt64;
  node @3 :Text;
  typeName @4 :Text;
  error @5 :Text;
  maxTaskRetries @6 :UInt32;  # handles found by name retry calls as the creator's do
}

struct ActorKill {
  actorId @0 :UInt64;
}

struct GcsChain {
  # Chain replication of a control-store shard: the chain's head sends each write down
  # the chain, the tail acknowledges to the head.
  shard @0 :UInt32;
  kind @1 :UInt8 = 1 $Cxx.enumeration(["sync", "write", "ack", "resync"]);
                           # sync: the whole shard; write: one record
  epoch @2 :UInt64;        # the chain's configuration; older ones are dropped
  seq @3 :UInt64;          # write: its number; sync and ack: the last write covered
  members @4 :List(Text);  # the chain, its head first
  records @5 :Data;        # framed control-store records (actors/gcs_record.hpp)
  # A key-value member's copy sent to a head that recovers: the placement version since
  # which its member is in the chain without a break (its copy of none says the chain
  # had rows then), and whether it kept this copy all that time, so it holds every write
  # the chain acknowledged. The head checks `since` against its own placement: a member
  # that missed the placements dropping it and placing it again cannot tell.
  since @6 :UInt64;
  complete @7 :Bool;
}

struct ShardChain {
  # One shard's replication chain: its primary (which takes its reads and writes) first.
  shard @0 :UInt32;
  members @1 :List(Text);
  # Of the key-value placement's chains, for each member: the placement version since
  # which it is a member without a break (0: since the table was first placed). A member
  # promoted with a copy it kept all that time holds every write the chain acknowledged.
  since @2 :List(UInt64);
}

struct KvPlacement {
  # The head: where the key-value table's shards are served (cluster.gcs_hosts > 1). Sent
  # to a node whose heartbeat names another version.
  version @0 :UInt64;
  chains @1 :List(ShardChain);
}

struct KvEntry {
  # A row of the control store's key-value table.
  key @0 :Text;
  value @1 :Data;
}

struct GroupAsk {
  # A placement-group request for the head's global scheduler.
  requestId @0 :UInt64;
  kind @1 :UInt8 = 1 $Cxx.enumeration(["create", "query", "remove", "wait"]);  # wait: answered once placed
  id @2 :UInt64;
  bundles @3 :List(List(Resource)); # create
  strategy @4 :UInt8;              # create: 0 pack, 1 spread, 2 strict_pack, 3 strict_spread
}

struct GroupAnswer {
  requestId @0 :UInt64;
  ok @1 :Bool;
  nodes @2 :List(Text);             # a placed group's node of each bundle
  bundles @3 :List(List(Resource));
  error @4 :ErrorValue;
}

struct ObjectBorrow {
  # The sender read a ref of an object the receiver owns: the owner keeps the object while
  # the sender holds it (the borrower protocol).
  id @0 :ObjectId;
}

struct ObjectBorrowed {
  # The owner's answer to an ObjectBorrow (`ack`), and, for an object not made yet then, a
  # second one when it is.
  id @0 :ObjectId;
  ack @1 :Bool;
  state @2 :UInt8 $Cxx.enumeration(["pending", "ready", "failed"]);
                           # ready: `value` holds it; failed: `error` says why
  value @3 :Arg;           # inline, or where to pull it from
  error @4 :ErrorValue;
}

struct ObjectUnborrow {
  # The sender let go of one borrow of the object.
  id @0 :ObjectId;
}

struct StreamItem $Cxx.lane(call) {
  # An item a streaming task or call wrote, from the node running it to its reader's: item
  # `seq` of the stream whose task's result is `result`.
  result @0 :ObjectId;
  seq @1 :UInt64;
  item @2 :TaskResult;
}

struct StreamAck $Cxx.lane(call) {
  # The reader took `taken` items of the stream: its writer may go on.
  result @0 :ObjectId;
  taken @1 :UInt64;
}

struct KvRequest {
  requestId @0 :UInt64;
  op @1 :UInt8 $Cxx.enumeration(["get", "put", "erase"]);
  key @2 :Text;
  value @3 :Data;
}

struct KvReply {
  requestId @0 :UInt64;
  found @1 :Bool;
  value @2 :Data;
  failed @3 :Bool;
  error @4 :ErrorValue;    # when failed: why
}

struct Envelope $Cxx.variant("message") {
  # Any message that crosses nodes: each frame holds one.
  union {
    hello @0 :Hello;
    proof @1 :Proof;
    heartbeat @2 :Heartbeat;
    taskSubmit @3 :TaskSubmit;
    taskResult @4 :TaskResult;
    objectPull @5 :ObjectPull;
    objectChunk @6 :ObjectChunk;
    objectFree @7 :ObjectFree;
    join @8 :Join;
    nodeTable @9 :NodeTable;
    statusRequest @10 :StatusRequest;
    stopRequest @11 :StopRequest;
    actorCreate @12 :ActorCreate;
    actorCreated @13 :ActorCreated;
    actorCall @14 :ActorCall;
    actorRegister @15 :ActorRegister;
    actorLookup @16 :ActorLookup;
    actorLocation @17 :ActorLocation;
    actorKill @18 :ActorKill;
    jobInfo @19 :JobInfo;
    objectLocation @20 :ObjectLocation;
    actorCheckpoint @21 :ActorCheckpoint;
    gcsChain @22 :GcsChain;
    kvEntry @23 :KvEntry;
    kvRequest @24 :KvRequest;
    kvReply @25 :KvReply;
    listRequest @26 :ListRequest;
    listReply @27 :ListReply;
    taskOutput @28 :TaskOutput;
    objectReplicate @29 :ObjectReplicate;
    objectReplicated @30 :ObjectReplicated;
    taskCancel @31 :TaskCancel;
    groupAsk @32 :GroupAsk;
    groupAnswer @33 :GroupAnswer;
    objectBorrow @34 :ObjectBorrow;
    objectBorrowed @35 :ObjectBorrowed;
    objectUnborrow @36 :ObjectUnborrow;
    streamItem @37 :StreamItem;
    streamAck @38 :StreamAck;
    clientAsk @39 :ClientAsk;
    clientWelcome @40 :ClientWelcome;
    jobSubmit @41 :JobSubmit;
    jobAsk @42 :JobAsk;
    jobAnswer @43 :JobAnswer;
    taskPlaced @44 :TaskPlaced;
    goodbye @45 :Goodbye;
    nodeFenced @46 :NodeFenced;
    actorCheckpointTaken @47 :ActorCheckpointTaken;
    objectsHandOver @48 :ObjectsHandOver;
    objectsTaken @49 :ObjectsTaken;
    nodeStopped @50 :NodeStopped;
    deviceShare @51 :DeviceShare;
    deviceReleased @52 :DeviceReleased;
    actorsMoving @53 :ActorsMoving;
    kvPlacement @54 :KvPlacement;
  }
}

struct JobSubmit {
  # Runs a program on the head as a job of the cluster, its output kept there.
  requestId @0 :UInt64;
  argv @1 :List(Text);
  cwd @2 :Text;        # empty: the head's
  token @3 :Text;      # the head's [jobs] token: nothing runs without it
}

struct JobAsk {
  # About submitted jobs: 0 their rows (`id` 0: all), 1 a job's output from `offset`, 2
  # stop a job.
  requestId @0 :UInt64;
  kind @1 :UInt8 $Cxx.enumeration(["status", "output", "stop"]);
  id @2 :UInt64;
  offset @3 :UInt64;
  token @4 :Text;      # the head's [jobs] token, as for a submit
}

struct JobRow {
  id @0 :UInt64;
  command @1 :Text;
  pid @2 :UInt32;
  state @3 :Text;      # running, succeeded, failed, stopped
  exitCode @4 :Int32;  # or the signal that ended it, negated
  startedMs @5 :UInt64;
  endedMs @6 :UInt64;
}

struct JobAnswer {
  requestId @0 :UInt64;
  ok @1 :Bool;
  error @2 :Text;
  jobs @3 :List(JobRow);
  output @4 :Data;     # for kind 1: the output from the offset asked
  outputEnd @5 :UInt64;  # the offset after it
}

struct ClientAsk {
  # A program asks the head to join its cluster as a client, or a node started with the
  # head's address (`swarm start --address`) to join it as a node that runs work.
  requestId @0 :UInt64;
  name @1 :Text;    # the name it will join under: refused when a live node has it
  worker @2 :Bool;  # a node that runs work, not a client
}

struct ClientWelcome {
  # The head's answer: what a node of the cluster needs to know, and the client's owner
  # index; or why not.
  requestId @0 :UInt64;
  ok @1 :Bool;
  error @2 :Text;
  cluster @3 :Text;
  ownerIndex @4 :UInt32;       # given to it; no other node's, live or restored
  nodes @5 :List(NodeInfo);    # the nodes of the cluster's file: name, address, port, head
  heartbeatMs @6 :UInt64;
  nodeTimeoutMs @7 :UInt64;
  joinWaitMs @8 :UInt64;
  gcsShards @9 :UInt32;
  gcsReplication @10 :UInt32;
  inlineThreshold @11 :UInt64;
  maxMessageBytes @12 :UInt64;
  idleConnectionMs @13 :UInt64; # a connection idle this long closes; 0: never
}
