#include "transport/wire_codec.hpp"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>
#include <kj/io.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "transport/wire.capnp.h"

#include "transport/wire_fields.hpp"

namespace swarm::wire_msg {

using namespace fields;

namespace {

// Writes a serialized message at the end of a frame's bytes.
class frame_output final : public kj::OutputStream {
public:
  explicit frame_output(std::vector<uint8_t>& out) : out_(out) {}

  void write(const void* buffer, size_t size) override {
    auto* p = static_cast<const uint8_t*>(buffer);
    out_.insert(out_.end(), p, p + size);
  }

private:
  std::vector<uint8_t>& out_;
};

struct builder_visitor {
  wire::Envelope::Builder env;

  void operator()(const hello& m) {
    auto b = env.initHello();
    b.setNode(m.node);
    b.setNonce(bytes_of(m.nonce));
    b.setProtocol(m.protocol);
    b.setBulk(m.bulk);
  }
  void operator()(const proof& m) { env.initProof().setMac(bytes_of(m.mac)); }
  void operator()(const heartbeat& m) {
    auto b = env.initHeartbeat();
    b.setSentNs(m.sent_ns);
    b.setLoad(m.load);
    put_resources(b.initAvailable(size_of(m.available.size())), m.available);
    b.setQueued(m.queued);
    put_store(b.initStore(), m.store);
    b.setRunning(m.running);
    put_priorities(b.initByPriority(size_of(m.by_priority.size())), m.by_priority);
    b.setNeedsTable(m.needs_table);
    b.setLeaving(m.leaving);
  }
  void operator()(const task_submit& m) {
    auto b = env.initTaskSubmit();
    b.setFunction(m.function);
    put_args(b.initArgs(size_of(m.args.size())), m.args);
    put_id(b.initResult(), m.result);
    put_resources(b.initResources(size_of(m.resources.size())), m.resources);
    b.setMaxRetries(m.max_retries);
    b.setRetryExceptions(m.retry_exceptions);
    b.setPriority(m.priority);
    b.setOwnerNode(m.owner_node);
    b.setPlaced(m.placed);
    b.setReplicas(m.replicas);
    b.setStreamOwner(m.stream_owner);
    b.setStreamWindow(m.stream_window);
    b.setLatencyCritical(m.latency_critical);
    b.setJob(m.job);
    b.setJobShare(m.job_share);
  }
  void operator()(const stream_item& m) {
    auto b = env.initStreamItem();
    put_id(b.initResult(), m.result);
    b.setSeq(m.seq);
    put_result(b.initItem(), m.item);
  }
  void operator()(const stream_ack& m) {
    auto b = env.initStreamAck();
    put_id(b.initResult(), m.result);
    b.setTaken(m.taken);
  }
  void operator()(const job_submit& m) {
    auto b = env.initJobSubmit();
    b.setRequestId(m.request_id);
    auto argv = b.initArgv(size_of(m.argv.size()));
    for (unsigned i = 0; i < m.argv.size(); ++i)
      argv.set(i, m.argv[i]);
    b.setCwd(m.cwd);
  }
  void operator()(const job_ask& m) {
    auto b = env.initJobAsk();
    b.setRequestId(m.request_id);
    b.setKind(static_cast<uint8_t>(m.kind));
    b.setId(m.id);
    b.setOffset(m.offset);
  }
  void operator()(const job_answer& m) {
    auto b = env.initJobAnswer();
    b.setRequestId(m.request_id);
    b.setOk(m.ok);
    b.setError(m.error);
    auto jobs = b.initJobs(size_of(m.jobs.size()));
    for (unsigned i = 0; i < m.jobs.size(); ++i) {
      auto& j = m.jobs[i];
      jobs[i].setId(j.id);
      jobs[i].setCommand(j.command);
      jobs[i].setPid(j.pid);
      jobs[i].setState(j.state);
      jobs[i].setExitCode(j.exit_code);
      jobs[i].setStartedMs(j.started_ms);
      jobs[i].setEndedMs(j.ended_ms);
    }
    b.setOutput(bytes_of(m.output));
    b.setOutputEnd(m.output_end);
  }
  void operator()(const client_ask& m) { env.initClientAsk().setRequestId(m.request_id); }
  void operator()(const client_welcome& m) {
    auto b = env.initClientWelcome();
    b.setRequestId(m.request_id);
    b.setOk(m.ok);
    b.setError(m.error);
    b.setCluster(m.cluster);
    b.setOwnerIndex(m.owner_index);
    auto nodes = b.initNodes(size_of(m.nodes.size()));
    for (unsigned i = 0; i < m.nodes.size(); ++i)
      put_node(nodes[i], m.nodes[i]);
    b.setHeartbeatMs(m.heartbeat_ms);
    b.setNodeTimeoutMs(m.node_timeout_ms);
    b.setJoinWaitMs(m.join_wait_ms);
    b.setGcsShards(m.gcs_shards);
    b.setGcsReplication(m.gcs_replication);
    b.setInlineThreshold(m.inline_threshold);
    b.setMaxMessageBytes(m.max_message_bytes);
  }
  void operator()(const actor_checkpoint& m) {
    auto b = env.initActorCheckpoint();
    b.setActorId(m.actor_id);
    b.setState(bytes_of(m.state));
  }
  void operator()(const task_result& m) { put_result(env.initTaskResult(), m); }
  static void put_result(wire::TaskResult::Builder b, const task_result& m) {
    put_id(b.initResult(), m.result);
    b.setLatencyCritical(m.latency_critical);
    if (auto* v = std::get_if<value>(&m.outcome)) {
      put_value(b.initValue(), *v);
    } else if (auto* e = std::get_if<error_value>(&m.outcome)) {
      put_error(b.initError(), *e);
    } else {
      auto s = b.initStored();
      s.setNode(std::get<stored_at>(m.outcome).node);
      s.setSize(std::get<stored_at>(m.outcome).size);
      auto& replicas = std::get<stored_at>(m.outcome).replicas;
      put_strings(s.initReplicas(size_of(replicas.size())), replicas);
    }
  }
  void operator()(const object_pull& m) {
    auto b = env.initObjectPull();
    put_id(b.initId(), m.id);
    b.setOffset(m.offset);
    b.setLength(m.length);
  }
  // The payload follows the message raw (see `raw_tail_flag`).
  void operator()(const object_chunk& m) {
    auto b = env.initObjectChunk();
    put_id(b.initId(), m.id);
    b.setOffset(m.offset);
    b.setTotal(m.total);
    b.setMissing(m.missing);
    put_strings(b.initHolders(size_of(m.holders.size())), m.holders);
    b.setNotYet(m.not_yet);
  }
  void operator()(const object_free& m) { put_id(env.initObjectFree().initId(), m.id); }
  void operator()(const join& m) { put_node(env.initJoin().initNode(), m.node); }
  void operator()(const node_table& m) {
    auto t = env.initNodeTable();
    auto list = t.initNodes(size_of(m.nodes.size()));
    for (unsigned i = 0; i < m.nodes.size(); ++i)
      put_node(list[i], m.nodes[i]);
    auto jobs = t.initJobs(size_of(m.jobs.size()));
    for (unsigned i = 0; i < m.jobs.size(); ++i)
      put_job(jobs[i], m.jobs[i]);
    t.setVersion(m.version);
    t.setBase(m.base);
    auto changes = t.initChanges(size_of(m.changes.size()));
    for (unsigned i = 0; i < m.changes.size(); ++i)
      put_change(changes[i], m.changes[i]);
    put_strings(t.initRemoved(size_of(m.removed.size())), m.removed);
  }
  void operator()(const job_info& m) { put_job(env.initJobInfo(), m); }
  void operator()(const object_location& m) {
    auto b = env.initObjectLocation();
    put_id(b.initId(), m.id);
    b.setNode(m.node);
    b.setSize(m.size);
    b.setPresent(m.present);
  }
  void operator()(const list_request& m) {
    auto b = env.initListRequest();
    b.setRequestId(m.request_id);
    b.setWhat(m.what);
    b.setLimit(m.limit);
  }
  void operator()(const list_reply& m) {
    auto b = env.initListReply();
    b.setRequestId(m.request_id);
    b.setNode(m.node);
    b.setTotal(m.total);
    auto rows = b.initRows(size_of(m.rows.size()));
    for (unsigned i = 0; i < rows.size(); ++i) {
      auto& r = m.rows[i];
      rows[i].setId(r.id);
      rows[i].setName(r.name);
      rows[i].setState(r.state);
      rows[i].setDetail(r.detail);
      auto numbers = rows[i].initNumbers(size_of(r.numbers.size()));
      for (unsigned k = 0; k < numbers.size(); ++k)
        numbers.set(k, r.numbers[k]);
    }
  }
  void operator()(const object_replicate& m) {
    put_ref(env.initObjectReplicate().initRef(), m.ref);
  }
  void operator()(const object_replicated& m) {
    auto b = env.initObjectReplicated();
    put_id(b.initId(), m.id);
    b.setError(m.error);
  }
  void operator()(const task_placed& m) {
    auto b = env.initTaskPlaced();
    put_id(b.initResult(), m.result);
    b.setNode(m.node);
  }
  void operator()(const task_cancel& m) {
    put_id(env.initTaskCancel().initResult(), m.result);
  }
  void operator()(const task_output& m) {
    auto b = env.initTaskOutput();
    b.setFunction(m.function);
    b.setNode(m.node);
    b.setText(m.text);
  }
  void operator()(const status_request& m) {
    env.initStatusRequest().setRequestId(m.request_id);
  }
  void operator()(const stop_request& m) {
    auto b = env.initStopRequest();
    b.setNode(m.node);
    b.setReason(m.reason);
  }
  void operator()(const actor_create& m) {
    auto b = env.initActorCreate();
    b.setRequestId(m.request_id);
    b.setTypeName(m.type_name);
    auto args = b.initArgs(size_of(m.args.size()));
    for (unsigned i = 0; i < m.args.size(); ++i)
      put_value(args[i], m.args[i]);
    b.setName(m.name);
    put_resources(b.initResources(size_of(m.resources.size())), m.resources);
    b.setMaxRestarts(m.max_restarts);
    b.setOwnerNode(m.owner_node);
    b.setPlaced(m.placed);
    b.setCheckpoint(bytes_of(m.checkpoint));
    b.setCheckpointEvery(m.checkpoint_every);
    b.setDurableCheckpoints(m.durable_checkpoints);
    b.setMaxConcurrency(m.max_concurrency);
    b.setMaxTaskRetries(m.max_task_retries);
  }
  void operator()(const actor_created& m) {
    auto b = env.initActorCreated();
    b.setRequestId(m.request_id);
    b.setActorId(m.actor_id);
    b.setNode(m.node);
    put_error(b.initError(), m.error);
    b.setOk(m.ok);
  }
  void operator()(const actor_call& m) {
    auto b = env.initActorCall();
    b.setActorId(m.actor_id);
    b.setMethod(m.method);
    put_args(b.initArgs(size_of(m.args.size())), m.args);
    put_id(b.initResult(), m.result);
    b.setCallerNode(m.caller_node);
    b.setStreamOwner(m.stream_owner);
    b.setStreamWindow(m.stream_window);
    b.setLatencyCritical(m.latency_critical);
    b.setPriority(m.priority);
  }
  void operator()(const actor_register& m) {
    auto b = env.initActorRegister();
    b.setRequestId(m.request_id);
    b.setName(m.name);
    b.setActorId(m.actor_id);
    b.setNode(m.node);
    b.setTypeName(m.type_name);
    b.setMaxTaskRetries(m.max_task_retries);
  }
  void operator()(const actor_lookup& m) {
    auto b = env.initActorLookup();
    b.setRequestId(m.request_id);
    b.setName(m.name);
  }
  void operator()(const actor_location& m) {
    auto b = env.initActorLocation();
    b.setRequestId(m.request_id);
    b.setFound(m.found);
    b.setActorId(m.actor_id);
    b.setNode(m.node);
    b.setTypeName(m.type_name);
    b.setError(m.error);
    b.setMaxTaskRetries(m.max_task_retries);
  }
  void operator()(const actor_kill& m) { env.initActorKill().setActorId(m.actor_id); }
  void operator()(const gcs_chain& m) {
    auto b = env.initGcsChain();
    b.setShard(m.shard);
    b.setKind(static_cast<uint8_t>(m.what));
    b.setEpoch(m.epoch);
    b.setSeq(m.seq);
    put_strings(b.initMembers(size_of(m.members.size())), m.members);
    b.setRecords(bytes_of(m.records));
  }
  void operator()(const kv_entry& m) {
    auto b = env.initKvEntry();
    b.setKey(m.key);
    b.setValue(bytes_of(m.value));
  }
  void operator()(const group_ask& m) {
    auto b = env.initGroupAsk();
    b.setRequestId(m.request_id);
    b.setKind(static_cast<uint8_t>(m.kind));
    b.setId(m.id);
    put_bundles(b.initBundles(size_of(m.bundles.size())), m.bundles);
    b.setStrategy(m.strategy);
  }
  void operator()(const group_answer& m) {
    auto b = env.initGroupAnswer();
    b.setRequestId(m.request_id);
    b.setOk(m.ok);
    put_strings(b.initNodes(size_of(m.nodes.size())), m.nodes);
    put_bundles(b.initBundles(size_of(m.bundles.size())), m.bundles);
    put_error(b.initError(), m.error);
  }
  void operator()(const object_borrow& m) {
    put_id(env.initObjectBorrow().initId(), m.id);
  }
  void operator()(const object_borrowed& m) {
    auto b = env.initObjectBorrowed();
    put_id(b.initId(), m.id);
    b.setAck(m.ack);
    b.setState(static_cast<uint8_t>(m.state));
    auto a = b.initValue();
    if (auto* v = std::get_if<value>(&m.value))
      put_value(a.initValue(), *v);
    else
      put_ref(a, std::get<remote_ref>(m.value));
    put_error(b.initError(), m.error);
  }
  void operator()(const object_unborrow& m) {
    put_id(env.initObjectUnborrow().initId(), m.id);
  }
  void operator()(const kv_request& m) {
    auto b = env.initKvRequest();
    b.setRequestId(m.request_id);
    b.setOp(static_cast<uint8_t>(m.op));
    b.setKey(m.key);
    b.setValue(bytes_of(m.value));
  }
  void operator()(const kv_reply& m) {
    auto b = env.initKvReply();
    b.setRequestId(m.request_id);
    b.setFound(m.found);
    b.setValue(bytes_of(m.value));
    b.setFailed(m.failed);
    auto e = b.initError();
    e.setCode(m.error.code);
    e.setMessage(m.error.message);
  }
};

} // namespace

lane lane_of(const message& m) {
  if (std::holds_alternative<object_pull>(m) || std::holds_alternative<object_chunk>(m))
    return lane::bulk;
  if (auto* t = std::get_if<task_submit>(&m); t && t->latency_critical)
    return lane::control;
  if (auto* c = std::get_if<actor_call>(&m); c && c->latency_critical)
    return lane::control;
  if (auto* r = std::get_if<task_result>(&m); r && r->latency_critical)
    return lane::control;
  if (std::holds_alternative<task_submit>(m) || std::holds_alternative<task_result>(m) ||
      std::holds_alternative<actor_call>(m) || std::holds_alternative<stream_item>(m) ||
      std::holds_alternative<stream_ack>(m))
    return lane::call;
  return lane::control;
}

frame_parts encode_frame_parts(const message& m) {
  capnp::MallocMessageBuilder builder;
  std::visit(builder_visitor{builder.initRoot<wire::Envelope>()}, m);
  auto words = capnp::computeSerializedSizeInWords(builder);
  auto len = static_cast<uint32_t>(words * sizeof(capnp::word));
  auto* chunk = std::get_if<object_chunk>(&m);
  bool raw = chunk != nullptr && chunk->size() > 0;
  auto head = raw ? raw_tail_header_bytes : frame_header_bytes;
  frame_parts out;
  out.bytes.reserve(head + len + (raw && !chunk->source ? chunk->size() : 0));
  out.bytes.resize(head);
  for (int i = 0; i < 4; ++i)
    out.bytes[static_cast<size_t>(i)] = static_cast<uint8_t>(len >> (8 * i));
  out.bytes[4] = static_cast<uint8_t>(lane_of(m));
  if (raw) {
    out.bytes[5] = raw_tail_flag;
    for (int i = 0; i < 8; ++i)
      out.bytes[frame_header_bytes + static_cast<size_t>(i)] =
          static_cast<uint8_t>(chunk->size() >> (8 * i));
  }
  // Serialized once, straight into the frame.
  frame_output stream{out.bytes};
  capnp::writeMessage(stream, builder);
  if (raw && chunk->source) {
    // Sent from where the payload is, which stays alive while the frame is queued.
    out.tail = chunk->bytes();
    out.tail_size = chunk->size();
    out.pad = raw_tail_padding(chunk->size());
    out.keep = chunk->source;
  } else if (raw) {
    // Bytes only the message keeps alive (its `data`) are copied into the frame.
    out.bytes.insert(out.bytes.end(), chunk->bytes(), chunk->bytes() + chunk->size());
    out.bytes.resize(out.bytes.size() + raw_tail_padding(chunk->size()));
  }
  return out;
}

std::vector<uint8_t> encode_frame(const message& m) {
  auto parts = encode_frame_parts(m);
  parts.bytes.insert(parts.bytes.end(), parts.tail, parts.tail + parts.tail_size);
  parts.bytes.resize(parts.bytes.size() + parts.pad);
  return std::move(parts.bytes);
}

} // namespace swarm::wire_msg
