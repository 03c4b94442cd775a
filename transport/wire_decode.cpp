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

task_result get_result(wire::TaskResult::Reader r) {
  task_result m;
  m.result = get_id(r.getResult());
  m.latency_critical = r.getLatencyCritical();
  switch (r.which()) {
  case wire::TaskResult::VALUE:
    m.outcome = get_value(r.getValue());
    break;
  case wire::TaskResult::ERROR:
    m.outcome = get_error(r.getError());
    break;
  case wire::TaskResult::STORED:
    m.outcome = stored_at{r.getStored().getNode(), r.getStored().getSize(),
                          get_strings(r.getStored().getReplicas())};
    break;
  }
  return m;
}

message read_envelope(wire::Envelope::Reader env) {
  switch (env.which()) {
  case wire::Envelope::HELLO: {
    auto r = env.getHello();
    return hello{r.getNode(), to_vector(r.getNonce()), r.getProtocol(), r.getBulk()};
  }
  case wire::Envelope::PROOF:
    return proof{to_vector(env.getProof().getMac())};
  case wire::Envelope::HEARTBEAT: {
    auto r = env.getHeartbeat();
    return heartbeat{r.getSentNs(),
                     r.getLoad(),
                     get_resources(r.getAvailable()),
                     r.getQueued(),
                     get_store(r.getStore()),
                     r.getRunning(),
                     get_priorities(r.getByPriority()),
                     r.getNeedsTable(),
                     r.getLeaving()};
  }
  case wire::Envelope::TASK_SUBMIT: {
    auto r = env.getTaskSubmit();
    task_submit m;
    m.function = r.getFunction();
    m.args = get_args(r.getArgs());
    m.result = get_id(r.getResult());
    m.resources = get_resources(r.getResources());
    m.max_retries = r.getMaxRetries();
    m.retry_exceptions = r.getRetryExceptions();
    m.priority = r.getPriority();
    m.owner_node = r.getOwnerNode();
    m.placed = r.getPlaced();
    m.replicas = r.getReplicas();
    m.stream_owner = r.getStreamOwner();
    m.stream_window = r.getStreamWindow();
    m.latency_critical = r.getLatencyCritical();
    m.job = r.getJob();
    m.job_share = r.getJobShare();
    return m;
  }
  case wire::Envelope::ACTOR_CHECKPOINT: {
    auto r = env.getActorCheckpoint();
    return actor_checkpoint{r.getActorId(), to_vector(r.getState())};
  }
  case wire::Envelope::TASK_RESULT:
    return get_result(env.getTaskResult());
  case wire::Envelope::STREAM_ITEM: {
    auto r = env.getStreamItem();
    return stream_item{get_id(r.getResult()), r.getSeq(), get_result(r.getItem())};
  }
  case wire::Envelope::STREAM_ACK: {
    auto r = env.getStreamAck();
    return stream_ack{get_id(r.getResult()), r.getTaken()};
  }
  case wire::Envelope::JOB_SUBMIT: {
    auto r = env.getJobSubmit();
    job_submit m;
    m.request_id = r.getRequestId();
    for (auto a : r.getArgv())
      m.argv.emplace_back(a);
    m.cwd = r.getCwd();
    return m;
  }
  case wire::Envelope::JOB_ASK: {
    auto r = env.getJobAsk();
    if (r.getKind() > static_cast<uint8_t>(job_ask::kind_type::stop))
      throw std::invalid_argument("unknown job question " + std::to_string(r.getKind()));
    return job_ask{r.getRequestId(), static_cast<job_ask::kind_type>(r.getKind()),
                   r.getId(), r.getOffset()};
  }
  case wire::Envelope::JOB_ANSWER: {
    auto r = env.getJobAnswer();
    job_answer m;
    m.request_id = r.getRequestId();
    m.ok = r.getOk();
    m.error = r.getError();
    for (auto j : r.getJobs())
      m.jobs.push_back({j.getId(), j.getCommand(), j.getPid(), j.getState(),
                        j.getExitCode(), j.getStartedMs(), j.getEndedMs()});
    m.output = to_vector(r.getOutput());
    m.output_end = r.getOutputEnd();
    return m;
  }
  case wire::Envelope::CLIENT_ASK:
    return client_ask{env.getClientAsk().getRequestId()};
  case wire::Envelope::CLIENT_WELCOME: {
    auto r = env.getClientWelcome();
    client_welcome m;
    m.request_id = r.getRequestId();
    m.ok = r.getOk();
    m.error = r.getError();
    m.cluster = r.getCluster();
    m.owner_index = r.getOwnerIndex();
    for (auto n : r.getNodes())
      m.nodes.push_back(get_node(n));
    m.heartbeat_ms = r.getHeartbeatMs();
    m.node_timeout_ms = r.getNodeTimeoutMs();
    m.join_wait_ms = r.getJoinWaitMs();
    m.gcs_shards = r.getGcsShards();
    m.gcs_replication = r.getGcsReplication();
    m.inline_threshold = r.getInlineThreshold();
    m.max_message_bytes = r.getMaxMessageBytes();
    return m;
  }
  case wire::Envelope::OBJECT_PULL: {
    auto r = env.getObjectPull();
    return object_pull{get_id(r.getId()), r.getOffset(), r.getLength()};
  }
  case wire::Envelope::OBJECT_CHUNK: {
    // Its payload, if any, is the frame's raw tail.
    auto r = env.getObjectChunk();
    if (r.hasData())
      throw std::invalid_argument("a chunk's payload must be its raw tail");
    object_chunk c;
    c.id = get_id(r.getId());
    c.offset = r.getOffset();
    c.total = r.getTotal();
    c.missing = r.getMissing();
    c.holders = get_strings(r.getHolders());
    c.not_yet = r.getNotYet();
    return c;
  }
  case wire::Envelope::OBJECT_FREE:
    return object_free{get_id(env.getObjectFree().getId())};
  case wire::Envelope::JOIN:
    return join{get_node(env.getJoin().getNode())};
  case wire::Envelope::NODE_TABLE: {
    node_table m;
    for (auto n : env.getNodeTable().getNodes())
      m.nodes.push_back(get_node(n));
    for (auto j : env.getNodeTable().getJobs())
      m.jobs.push_back(get_job(j));
    m.version = env.getNodeTable().getVersion();
    m.base = env.getNodeTable().getBase();
    for (auto c : env.getNodeTable().getChanges())
      m.changes.push_back(get_change(c));
    m.removed = get_strings(env.getNodeTable().getRemoved());
    return m;
  }
  case wire::Envelope::JOB_INFO:
    return get_job(env.getJobInfo());
  case wire::Envelope::OBJECT_LOCATION: {
    auto r = env.getObjectLocation();
    return object_location{get_id(r.getId()), r.getNode(), r.getSize(), r.getPresent()};
  }
  case wire::Envelope::LIST_REQUEST: {
    auto r = env.getListRequest();
    return list_request{r.getRequestId(), r.getWhat(), r.getLimit()};
  }
  case wire::Envelope::LIST_REPLY: {
    auto r = env.getListReply();
    list_reply out{r.getRequestId(), r.getNode(), {}, r.getTotal()};
    for (auto row : r.getRows()) {
      std::vector<int64_t> numbers;
      for (auto n : row.getNumbers())
        numbers.push_back(n);
      out.rows.push_back({row.getId(), row.getName(), row.getState(), row.getDetail(),
                          std::move(numbers)});
    }
    return out;
  }
  case wire::Envelope::OBJECT_REPLICATE: {
    auto r = env.getObjectReplicate().getRef();
    if (!r.isRef()) throw std::invalid_argument("a replica's reference holds a value");
    return object_replicate{get_ref(r)};
  }
  case wire::Envelope::OBJECT_REPLICATED: {
    auto r = env.getObjectReplicated();
    return object_replicated{get_id(r.getId()), r.getError()};
  }
  case wire::Envelope::TASK_CANCEL:
    return task_cancel{get_id(env.getTaskCancel().getResult())};
  case wire::Envelope::TASK_PLACED: {
    auto r = env.getTaskPlaced();
    return task_placed{get_id(r.getResult()), r.getNode()};
  }
  case wire::Envelope::TASK_OUTPUT: {
    auto r = env.getTaskOutput();
    return task_output{r.getFunction(), r.getNode(), r.getText()};
  }
  case wire::Envelope::STATUS_REQUEST:
    return status_request{env.getStatusRequest().getRequestId()};
  case wire::Envelope::STOP_REQUEST:
    return stop_request{env.getStopRequest().getNode(), env.getStopRequest().getReason()};
  case wire::Envelope::ACTOR_CREATE: {
    auto r = env.getActorCreate();
    actor_create m;
    m.request_id = r.getRequestId();
    m.type_name = r.getTypeName();
    for (auto v : r.getArgs())
      m.args.push_back(get_value(v));
    m.name = r.getName();
    m.resources = get_resources(r.getResources());
    m.max_restarts = r.getMaxRestarts();
    m.owner_node = r.getOwnerNode();
    m.placed = r.getPlaced();
    m.checkpoint = to_vector(r.getCheckpoint());
    m.checkpoint_every = r.getCheckpointEvery();
    m.durable_checkpoints = r.getDurableCheckpoints();
    m.max_concurrency = r.getMaxConcurrency();
    m.max_task_retries = r.getMaxTaskRetries();
    return m;
  }
  case wire::Envelope::ACTOR_CREATED: {
    auto r = env.getActorCreated();
    return actor_created{r.getRequestId(), r.getActorId(), r.getNode(),
                         get_error(r.getError()), r.getOk()};
  }
  case wire::Envelope::ACTOR_CALL: {
    auto r = env.getActorCall();
    return actor_call{
        r.getActorId(),        r.getMethod(),          get_args(r.getArgs()),
        get_id(r.getResult()), r.getCallerNode(),      r.getStreamOwner(),
        r.getStreamWindow(),   r.getLatencyCritical(), r.getPriority()};
  }
  case wire::Envelope::ACTOR_REGISTER: {
    auto r = env.getActorRegister();
    return actor_register{r.getRequestId(), r.getName(),     r.getActorId(),
                          r.getNode(),      r.getTypeName(), r.getMaxTaskRetries()};
  }
  case wire::Envelope::ACTOR_LOOKUP: {
    auto r = env.getActorLookup();
    return actor_lookup{r.getRequestId(), r.getName()};
  }
  case wire::Envelope::ACTOR_LOCATION: {
    auto r = env.getActorLocation();
    return actor_location{r.getRequestId(), r.getFound(),    r.getActorId(),
                          r.getNode(),      r.getTypeName(), r.getError(),
                          r.getMaxTaskRetries()};
  }
  case wire::Envelope::ACTOR_KILL:
    return actor_kill{env.getActorKill().getActorId()};
  case wire::Envelope::GCS_CHAIN: {
    auto r = env.getGcsChain();
    if (r.getKind() > static_cast<uint8_t>(gcs_chain::kind::resync))
      throw std::invalid_argument("unknown gcs chain kind " +
                                  std::to_string(r.getKind()));
    gcs_chain m;
    m.shard = r.getShard();
    m.what = static_cast<gcs_chain::kind>(r.getKind());
    m.epoch = r.getEpoch();
    m.seq = r.getSeq();
    m.members = get_strings(r.getMembers());
    m.records = to_vector(r.getRecords());
    return m;
  }
  case wire::Envelope::KV_ENTRY: {
    auto r = env.getKvEntry();
    return kv_entry{r.getKey(), to_vector(r.getValue())};
  }
  case wire::Envelope::KV_REQUEST: {
    auto r = env.getKvRequest();
    if (r.getOp() > static_cast<uint8_t>(kv_request::op_type::erase))
      throw std::invalid_argument("unknown key-value op " + std::to_string(r.getOp()));
    return kv_request{r.getRequestId(), static_cast<kv_request::op_type>(r.getOp()),
                      r.getKey(), to_vector(r.getValue())};
  }
  case wire::Envelope::GROUP_ASK: {
    auto r = env.getGroupAsk();
    if (r.getKind() > static_cast<uint8_t>(group_ask::kind_type::remove))
      throw std::invalid_argument("unknown placement-group request " +
                                  std::to_string(r.getKind()));
    return group_ask{r.getRequestId(), static_cast<group_ask::kind_type>(r.getKind()),
                     r.getId(), get_bundles(r.getBundles()), r.getStrategy()};
  }
  case wire::Envelope::GROUP_ANSWER: {
    auto r = env.getGroupAnswer();
    return group_answer{r.getRequestId(), r.getOk(), get_strings(r.getNodes()),
                        get_bundles(r.getBundles()), get_error(r.getError())};
  }
  case wire::Envelope::OBJECT_BORROW:
    return object_borrow{get_id(env.getObjectBorrow().getId())};
  case wire::Envelope::OBJECT_BORROWED: {
    auto r = env.getObjectBorrowed();
    if (r.getState() > static_cast<uint8_t>(object_borrowed::state_type::failed))
      throw std::invalid_argument("unknown borrowed-object state " +
                                  std::to_string(r.getState()));
    object_borrowed m;
    m.id = get_id(r.getId());
    m.ack = r.getAck();
    m.state = static_cast<object_borrowed::state_type>(r.getState());
    auto a = r.getValue();
    if (a.isValue())
      m.value = get_value(a.getValue());
    else
      m.value = get_ref(a);
    m.error = get_error(r.getError());
    return m;
  }
  case wire::Envelope::OBJECT_UNBORROW:
    return object_unborrow{get_id(env.getObjectUnborrow().getId())};
  case wire::Envelope::KV_REPLY: {
    auto r = env.getKvReply();
    return kv_reply{r.getRequestId(), r.getFound(), to_vector(r.getValue()),
                    r.getFailed(),
                    error_value{r.getError().getCode(), r.getError().getMessage()}};
  }
  }
  // A union member from a newer peer this build does not know.
  throw std::invalid_argument("unknown message kind " + std::to_string(env.which()));
}

} // namespace

result<message> decode_message(const uint8_t* data, size_t bytes) {
  kj::ArrayPtr<const capnp::word> words{reinterpret_cast<const capnp::word*>(data),
                                        bytes / sizeof(capnp::word)};
  try {
    capnp::ReaderOptions opts;
    opts.traversalLimitInWords = bytes / sizeof(capnp::word) * 4 + 64;
    opts.nestingLimit = 16;
    capnp::FlatArrayMessageReader reader{words, opts};
    return read_envelope(reader.getRoot<wire::Envelope>());
  } catch (const kj::Exception& e) {
    return error{errc::invalid_argument, "malformed Cap'n Proto message: " +
                                             std::string{e.getDescription().cStr()}};
  } catch (const std::exception& e) {
    return error{errc::invalid_argument, std::string{"malformed message: "} + e.what()};
  }
}

} // namespace swarm::wire_msg
