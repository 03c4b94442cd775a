#pragma once

// The control store's messages: the shards' tables, registrations and chains.

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>

#include <vector>

#include "actors/common/protocol.hpp"
#include "actors/control_store/table_row.hpp"
#include "transport/wire_message.hpp"

namespace swarm::actors {

using register_atom = caf::atom_constant<caf::atom("register")>;
using scan_atom = caf::atom_constant<caf::atom("scan")>;
using chain_atom = caf::atom_constant<caf::atom("chain")>;

using request_atom = caf::atom_constant<caf::atom("request")>;
using answer_atom = caf::atom_constant<caf::atom("answer")>;
using expire_atom = caf::atom_constant<caf::atom("expire")>;
using job_atom = caf::atom_constant<caf::atom("job")>;

} // namespace swarm::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::actors::table_row)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<swarm::actors::table_row>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::wire_msg::gcs_chain)
