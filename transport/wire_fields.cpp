#include "transport/wire_fields.hpp"

namespace swarm::wire_msg::fields {

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

resource_list get_resources(capnp::List<wire::Resource>::Reader r) {
  resource_list out;
  for (auto x : r)
    out.emplace_back(x.getName(), x.getAmount());
  return out;
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
  b.setLeaving(n.leaving);
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
          r.getOwnerIndex(),
          r.getLeaving()};
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
  b.setLeaving(c.leaving);
}

node_change get_change(wire::NodeChange::Reader r) {
  return {r.getName(),
          r.getAlive(),
          r.getLastSeenMs(),
          get_resources(r.getAvailable()),
          r.getQueued(),
          r.getRunning(),
          get_priorities(r.getByPriority()),
          get_store(r.getStore()),
          r.getLeaving()};
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

} // namespace swarm::wire_msg::fields
