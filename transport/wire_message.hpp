#pragma once

// The cross-node messages as plain C++ values. Nothing outside transport/ sees Cap'n
// Proto types; wire_codec converts.

#include <cstdint>
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
};

struct proof {
  std::vector<uint8_t> mac;
};

struct heartbeat {
  uint64_t sent_ns = 0;
  double load = 0;
};

struct task_submit {
  std::string function;
  std::vector<std::variant<value, object_ref_id>> args;
  object_ref_id result;
  std::vector<std::pair<std::string, double>> resources;
  uint32_t max_retries = 0;
  bool retry_exceptions = false;
  int32_t priority = 0;
};

struct task_result {
  object_ref_id result;
  std::variant<value, error_value> outcome;
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
};

/// Any message that crosses nodes.
using message = std::variant<hello, proof, heartbeat, task_submit, task_result,
                             object_pull, object_chunk>;

/// Traffic classes: control and calls are never queued behind bulk object transfers.
enum class lane : uint8_t { control = 0, call = 1, bulk = 2 };

/// The lane a message travels on.
lane lane_of(const message& m);

} // namespace swarm::wire_msg
