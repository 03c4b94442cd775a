#pragma once

#include <map>
#include <string>
#include <variant>

#include "transport/wire_message.hpp"

namespace swarm::actors {

/// A row of a control-store table: the node table ("node"), the job table ("job") and
/// the object table ("object", where objects live other than with their owners) and the
/// key-value table ("kv", what users store with `runtime::kv_put`).
using table_row = std::variant<wire_msg::node_info, wire_msg::job_info,
                               wire_msg::object_location, wire_msg::kv_entry>;

/// The row tables of one control-store shard: table -> key -> row.
using row_tables = std::map<std::string, std::map<std::string, table_row>>;

} // namespace swarm::actors
