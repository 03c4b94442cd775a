#pragma once

// The Cap'n Proto readers and builders of the structs several wire messages share:
// used by the encoder (wire_codec.cpp) and the decoder (wire_decode.cpp) only.

#include <capnp/list.h>

#include <cstdint>
#include <string>
#include <vector>

#include "transport/wire.capnp.h"
#include "transport/wire_message.hpp"

namespace swarm::wire_msg::fields {

kj::ArrayPtr<const kj::byte> bytes_of(const std::vector<uint8_t>& v);

std::vector<uint8_t> to_vector(capnp::Data::Reader d);

void put_id(wire::ObjectId::Builder b, const object_ref_id& id);

object_ref_id get_id(wire::ObjectId::Reader r);

void put_value(wire::Value::Builder b, const value& v);

value get_value(wire::Value::Reader r);

unsigned size_of(size_t n);

void put_strings(capnp::List<capnp::Text>::Builder list,
                 const std::vector<std::string>& xs);

std::vector<std::string> get_strings(capnp::List<capnp::Text>::Reader list);

template <class B> void put_resources(B list, const resource_list& rs) {
  for (unsigned i = 0; i < rs.size(); ++i) {
    list[i].setName(rs[i].first);
    list[i].setAmount(rs[i].second);
  }
}

resource_list get_resources(capnp::List<wire::Resource>::Reader r);

template <class B> void put_bundles(B list, const std::vector<resource_list>& bundles) {
  for (unsigned i = 0; i < bundles.size(); ++i)
    put_resources(list.init(i, size_of(bundles[i].size())), bundles[i]);
}

std::vector<resource_list>
get_bundles(capnp::List<capnp::List<wire::Resource>>::Reader r);

void put_ref(wire::Arg::Builder b, const remote_ref& r);

remote_ref get_ref(wire::Arg::Reader a);

void put_args(capnp::List<wire::Arg>::Builder list, const std::vector<arg>& args);

std::vector<arg> get_args(capnp::List<wire::Arg>::Reader list);

void put_error(wire::ErrorValue::Builder b, const error_value& e);

error_value get_error(wire::ErrorValue::Reader r);

void put_store(wire::StoreUsage::Builder b, const store_usage& s);

store_usage get_store(wire::StoreUsage::Reader r);

void put_capabilities(capnp::List<wire::Capability>::Builder b,
                      const std::vector<capability>& cs);

std::vector<capability> get_capabilities(capnp::List<wire::Capability>::Reader r);

void put_priorities(capnp::List<wire::PriorityCount>::Builder b,
                    const priority_counts& ps);

priority_counts get_priorities(capnp::List<wire::PriorityCount>::Reader r);

void put_node(wire::NodeInfo::Builder b, const node_info& n);

node_info get_node(wire::NodeInfo::Reader r);

void put_change(wire::NodeChange::Builder b, const node_change& c);

node_change get_change(wire::NodeChange::Reader r);

void put_job(wire::JobInfo::Builder b, const job_info& j);

job_info get_job(wire::JobInfo::Reader r);

} // namespace swarm::wire_msg::fields
