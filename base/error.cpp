#include "base/error.hpp"

namespace swarm {

const char* to_string(errc code) {
  switch (code) {
  case errc::application_error:
    return "application_error";
  case errc::timeout:
    return "timeout";
  case errc::cancelled:
    return "cancelled";
  case errc::object_freed:
    return "object_freed";
  case errc::unregistered:
    return "unregistered";
  case errc::type_mismatch:
    return "type_mismatch";
  case errc::store_full:
    return "store_full";
  case errc::infeasible:
    return "infeasible";
  case errc::actor_died:
    return "actor_died";
  case errc::worker_died:
    return "worker_died";
  case errc::dependency_failed:
    return "dependency_failed";
  case errc::invalid_argument:
    return "invalid_argument";
  case errc::runtime_stopped:
    return "runtime_stopped";
  case errc::node_unreachable:
    return "node_unreachable";
  case errc::object_lost:
    return "object_lost";
  case errc::owner_died:
    return "owner_died";
  case errc::io_error:
    return "io_error";
  case errc::device_out_of_memory:
    return "device_out_of_memory";
  case errc::device_failed:
    return "device_failed";
  case errc::device_error:
    return "device_error";
  }
  return "unknown";
}

std::string error::to_string() const {
  return std::string{swarm::to_string(code)} + ": " + message;
}

failure::failure(error e) : std::runtime_error(e.to_string()), err_(std::move(e)) {}

} // namespace swarm
