#pragma once

#include <stdexcept>
#include <string>

namespace swarm {

/// What kind of failure an `error` reports.
enum class errc {
  application_error,    ///< user code threw; the message is the exception's
  timeout,              ///< a wait ended before the object was ready
  cancelled,            ///< the task was cancelled before it ran
  object_freed,         ///< the object was freed before it was read
  unregistered,         ///< no function or actor type with that name
  type_mismatch,        ///< arguments or a result of the wrong type
  store_full,           ///< the object store has no room for the object
  infeasible,           ///< no node could ever satisfy the resource demand
  actor_died,           ///< the actor died and will not be restarted
  worker_died,          ///< the worker running a task died and retries ran out
  dependency_failed,    ///< an argument future held an error
  invalid_argument,     ///< bad input to an API call
  runtime_stopped,      ///< the runtime shut down before the work finished
  node_unreachable,     ///< no connection to the node that holds the work or object
  object_lost,          ///< the node holding the object died and it could not be remade
  owner_died,           ///< the object's owner died, and with it the object's value
  io_error,             ///< a file could not be read or written; the message names it
  device_out_of_memory, ///< a GPU had no room for an allocation within its wait
  device_failed,        ///< a GPU failed (a kernel faulted); its worker was restarted
  device_error,         ///< a GPU refused a call (a bad argument or launch); it goes on
};

/// The last `errc`; codes past it from another build read as application errors.
inline constexpr errc last_errc = errc::device_error;

/// Returns the name of `code`, e.g. "timeout".
const char* to_string(errc code);

/// A failure with its kind and a human-readable message saying what went wrong and where.
struct error {
  errc code = errc::application_error;
  std::string message;

  /// "code: message".
  std::string to_string() const;
};

/// Thrown by `result<T>::value()` when the result holds an error.
class failure : public std::runtime_error {
public:
  explicit failure(error e);

  const swarm::error& err() const noexcept { return err_; }

private:
  swarm::error err_;
};

} // namespace swarm
