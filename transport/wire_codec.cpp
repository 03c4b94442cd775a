#include "transport/wire_codec.hpp"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>
#include <kj/io.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "transport/wire.capnp.h"

namespace swarm::wire_msg {

namespace {

kj::ArrayPtr<const kj::byte> bytes_of(const std::vector<uint8_t>& v) {
  return {reinterpret_cast<const kj::byte*>(v.data()), v.size()};
}

std::vector<uint8_t> to_vector(capnp::Data::Reader d) {
  return {d.begin(), d.end()};
}

void put_id(wire::ObjectId::Builder b, const object_ref_id& id) {
  b.setOwner(id.owner);
  b.setSeq(id.seq);
}

object_ref_id get_id(wire::ObjectId::Reader r) {
  return {r.getOwner(), r.getSeq()};
}

void put_value(wire::Value::Builder b, const value& v) {
  b.setTypeName(v.type_name);
  b.setBytes(bytes_of(v.bytes));
}

value get_value(wire::Value::Reader r) {
  return {r.getTypeName(), to_vector(r.getBytes())};
}

unsigned size_of(size_t n) {
  return static_cast<unsigned>(n);
}

void put_strings(capnp::List<capnp::Text>::Builder list,
                 const std::vector<std::string>& xs) {
  for (unsigned i = 0; i < xs.size(); ++i)
    list.set(i, xs[i]);
}

std::vector<std::string> get_strings(capnp::List<capnp::Text>::Reader list) {
  std::vector<std::string> out;
  out.reserve(list.size());
  for (auto t : list)
    out.emplace_back(t);
  return out;
}

template <class B> void put_resources(B list, const resource_list& rs) {
  for (unsigned i = 0; i < rs.size(); ++i) {
    list[i].setName(rs[i].first);
    list[i].setAmount(rs[i].second);
  }
}

resource_list get_resources(capnp::List<wire::Resource>::Reader r) {
  resource_list out;
  for (auto x : r)
    out.emplace_back(x.getName(), x.getAmount());
  return out;
}

template <class B> void put_bundles(B list, const std::vector<resource_list>& bundles) {
  for (unsigned i = 0; i < bundles.size(); ++i)
    put_resources(list.init(i, size_of(bundles[i].size())), bundles[i]);
}

std::vector<resource_list>
get_bundles(capnp::List<capnp::List<wire::Resource>>::Reader r) {
  std::vector<resource_list> out;
  for (auto b : r)
    out.push_back(get_resources(b));
  return out;
}

void put_ref(wire::Arg::Builder b, const remote_ref& r) {
  put_id(b.initRef(), r.id);
  b.setNode(r.node);
  b.setSize(r.size);
  put_strings(b.initHolders(size_of(r.holders.size())), r.holders);
}

remote_ref get_ref(wire::Arg::Reader a) {
  return {get_id(a.getRef()), a.getNode(), a.getSize(), get_strings(a.getHolders())};
}

void put_args(capnp::List<wire::Arg>::Builder list, const std::vector<arg>& args) {
  for (unsigned i = 0; i < args.size(); ++i) {
    if (auto* v = std::get_if<value>(&args[i]))
      put_value(list[i].initValue(), *v);
    else
      put_ref(list[i], std::get<remote_ref>(args[i]));
  }
}

std::vector<arg> get_args(capnp::List<wire::Arg>::Reader list) {
  std::vector<arg> out;
  for (auto a : list) {
    if (a.isValue())
      out.emplace_back(get_value(a.getValue()));
    else
      out.emplace_back(get_ref(a));
  }
  return out;
}

void put_error(wire::ErrorValue::Builder b, const error_value& e) {
  b.setCode(e.code);
  b.setMessage(e.message);
}

error_value get_error(wire::ErrorValue::Reader r) {
  return {r.getCode(), r.getMessage()};
}

void put_store(wire::StoreUsage::Builder b, const store_usage& s) {
  b.setBytes(s.bytes);
  b.setCapacity(s.capacity);
  b.setPulled(s.pulled);
  b.setPooled(s.pooled);
  b.setPoolReuses(s.pool_reuses);
  b.setSpilled(s.spilled);
  b.setSpills(s.spills);
  b.setRestores(s.restores);
  b.setHits(s.hits);
  b.setMisses(s.misses);
  b.setEvictions(s.evictions);
}

store_usage get_store(wire::StoreUsage::Reader r) {
  return {r.getBytes(),      r.getCapacity(), r.getPulled(),   r.getPooled(),
          r.getPoolReuses(), r.getSpilled(),  r.getSpills(),   r.getRestores(),
          r.getHits(),       r.getMisses(),   r.getEvictions()};
}

void put_capabilities(capnp::List<wire::Capability>::Builder b,
                      const std::vector<capability>& cs) {
  for (unsigned i = 0; i < cs.size(); ++i) {
    b[i].setName(cs[i].name);
    b[i].setSignature(cs[i].signature);
  }
}

std::vector<capability> get_capabilities(capnp::List<wire::Capability>::Reader r) {
  std::vector<capability> out;
  for (auto c : r)
    out.push_back({c.getName(), c.getSignature()});
  return out;
}

void put_priorities(capnp::List<wire::PriorityCount>::Builder b,
                    const priority_counts& ps) {
  for (unsigned i = 0; i < ps.size(); ++i) {
    b[i].setPriority(ps[i].first);
    b[i].setTasks(ps[i].second);
  }
}

priority_counts get_priorities(capnp::List<wire::PriorityCount>::Reader r) {
  priority_counts out;
  for (auto p : r)
    out.emplace_back(p.getPriority(), p.getTasks());
  return out;
}

void put_node(wire::NodeInfo::Builder b, const node_info& n) {
  b.setName(n.name);
  b.setAddress(n.address);
  b.setPort(n.port);
  put_resources(b.initTotal(static_cast<unsigned>(n.total.size())), n.total);
  put_resources(b.initAvailable(static_cast<unsigned>(n.available.size())), n.available);
  b.setQueued(n.queued);
  b.setAlive(n.alive);
  b.setHead(n.head);
  b.setLastSeenMs(n.last_seen_ms);
  put_store(b.initStore(), n.store);
  put_capabilities(b.initFunctions(static_cast<unsigned>(n.functions.size())),
                   n.functions);
  put_capabilities(b.initActorTypes(static_cast<unsigned>(n.actor_types.size())),
                   n.actor_types);
  b.setRunning(n.running);
  put_priorities(b.initByPriority(static_cast<unsigned>(n.by_priority.size())),
                 n.by_priority);
  b.setClient(n.client);
  b.setOwnerIndex(n.owner_index);
}

node_info get_node(wire::NodeInfo::Reader r) {
  return {r.getName(),
          r.getAddress(),
          r.getPort(),
          get_resources(r.getTotal()),
          get_resources(r.getAvailable()),
          r.getQueued(),
          r.getAlive(),
          r.getHead(),
          r.getLastSeenMs(),
          get_store(r.getStore()),
          get_capabilities(r.getFunctions()),
          get_capabilities(r.getActorTypes()),
          r.getRunning(),
          get_priorities(r.getByPriority()),
          r.getClient(),
          r.getOwnerIndex()};
}

void put_change(wire::NodeChange::Builder b, const node_change& c) {
  b.setName(c.name);
  b.setAlive(c.alive);
  b.setLastSeenMs(c.last_seen_ms);
  put_resources(b.initAvailable(size_of(c.available.size())), c.available);
  b.setQueued(c.queued);
  b.setRunning(c.running);
  put_priorities(b.initByPriority(size_of(c.by_priority.size())), c.by_priority);
  put_store(b.initStore(), c.store);
}

node_change get_change(wire::NodeChange::Reader r) {
  return {r.getName(),
          r.getAlive(),
          r.getLastSeenMs(),
          get_resources(r.getAvailable()),
          r.getQueued(),
          r.getRunning(),
          get_priorities(r.getByPriority()),
          get_store(r.getStore())};
}

void put_job(wire::JobInfo::Builder b, const job_info& j) {
  b.setId(j.id);
  b.setDriver(j.driver);
  b.setPid(j.pid);
  b.setRunning(j.running);
  b.setStartedMs(j.started_ms);
  b.setEndedMs(j.ended_ms);
}

job_info get_job(wire::JobInfo::Reader r) {
  return {r.getId(),      r.getDriver(),    r.getPid(),
          r.getRunning(), r.getStartedMs(), r.getEndedMs()};
}

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
                     r.getNeedsTable()};
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
    return actor_register{r.getRequestId(), r.getName(), r.getActorId(), r.getNode(),
                          r.getTypeName()};
  }
  case wire::Envelope::ACTOR_LOOKUP: {
    auto r = env.getActorLookup();
    return actor_lookup{r.getRequestId(), r.getName()};
  }
  case wire::Envelope::ACTOR_LOCATION: {
    auto r = env.getActorLocation();
    return actor_location{r.getRequestId(), r.getFound(),    r.getActorId(),
                          r.getNode(),      r.getTypeName(), r.getError()};
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
