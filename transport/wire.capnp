@0xa4b43ad4c941e159;
# Every message that crosses nodes. Append-only: fields and union members only ever get new
# ordinals; none is renumbered or removed. Inside a node, messages are plain C++ values
# (transport/wire_message.hpp); conversion happens only in transport/.

$import "/capnp/c++.capnp".namespace("swarm::wire");

struct ObjectId {
  owner @0 :UInt64;
  seq @1 :UInt64;
}

# A value in its `inspect` encoding, named by its type so the receiver can check it.
struct Value {
  typeName @0 :Text;
  bytes @1 :Data;
}

struct ErrorValue {
  code @0 :UInt16;     # swarm::errc
  message @1 :Text;
}

struct Resource {
  name @0 :Text;
  amount @1 :Float64;
}

# First message on a connection, both ways.
struct Hello {
  node @0 :Text;
  nonce @1 :Data;      # 32 random bytes
  protocol @2 :UInt32;
}

# Second message: HMAC-SHA256 over both nonces and the sender's name, keyed by the secret.
struct Proof {
  mac @0 :Data;
}

struct Heartbeat {
  sentNs @0 :UInt64;
  load @1 :Float64;
}

struct Arg {
  union {
    value @0 :Value;
    ref @1 :ObjectId;
  }
}

struct TaskSubmit {
  function @0 :Text;
  args @1 :List(Arg);
  result @2 :ObjectId;
  resources @3 :List(Resource);
  maxRetries @4 :UInt32;
  retryExceptions @5 :Bool;
  priority @6 :Int32;
}

struct TaskResult {
  result @0 :ObjectId;
  union {
    value @1 :Value;
    error @2 :ErrorValue;
  }
}

struct ObjectPull {
  id @0 :ObjectId;
  offset @1 :UInt64;
  length @2 :UInt64;
}

struct ObjectChunk {
  id @0 :ObjectId;
  offset @1 :UInt64;
  total @2 :UInt64;
  data @3 :Data;
}

struct Envelope {
  union {
    hello @0 :Hello;
    proof @1 :Proof;
    heartbeat @2 :Heartbeat;
    taskSubmit @3 :TaskSubmit;
    taskResult @4 :TaskResult;
    objectPull @5 :ObjectPull;
    objectChunk @6 :ObjectChunk;
  }
}
