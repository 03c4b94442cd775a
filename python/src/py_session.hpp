#pragma once

#include <nanobind/nanobind.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "framework/dynamic.hpp"
#include "framework/runtime.hpp"
#include "python/src/py_values.hpp"

namespace swarm::python {

class session;

/// A Python `ObjectRef`: a future, and the session that reads it.
struct py_ref {
  dynamic_ref ref;
  std::shared_ptr<session> owner;
};

/// A Python `ObjectRefStream`: the items of a streaming task or actor call.
struct py_stream {
  dynamic_stream stream;
  std::shared_ptr<session> owner;
};

/// A Python `ActorHandle`'s actor, and the session that calls it.
struct py_actor {
  dynamic_actor actor;
  std::shared_ptr<session> owner;
};

/// How a session starts: a client of the cluster at `address` (host:port), or an
/// embedded node when it is empty.
struct session_options {
  std::string address;
  std::string secret;
  std::string name;
  std::vector<std::string> libraries;
  std::chrono::milliseconds timeout{10'000};
  std::optional<double> cpus; ///< an embedded node's CPUs
};

/// A Python process's Swarm: its registry (with the libraries of user code it loaded),
/// its runtime (a client of a cluster, or an embedded node) and the shapes it met.
/// Python calls it with the GIL held; waits release the GIL.
class session : public std::enable_shared_from_this<session> {
public:
  /// Loads the libraries and starts the runtime; raises `SwarmError` naming what failed.
  explicit session(const session_options& opts);
  ~session();

  session(const session&) = delete;
  session& operator=(const session&) = delete;

  /// An `ObjectRef`, or an `ObjectRefStream` for a streaming function.
  nb::object submit(const std::string& function, nb::tuple args, nb::dict options);
  py_ref put(nb::handle value);
  /// A writable NumPy array of `n` zeros of the number type `kind`/`itemsize` (NumPy's
  /// dtype.kind and itemsize) in memory the store can keep: passed to `put` or a
  /// function, it is taken without a copy (and made read-only).
  nb::object empty(size_t n, const std::string& kind, size_t itemsize);
  py_actor spawn(const std::string& type, nb::tuple args, nb::dict options);
  /// An `ObjectRef`, or an `ObjectRefStream` for a streaming method.
  nb::object call(const py_actor& actor, const std::string& method, nb::tuple args,
                  nb::dict options);
  /// The next item's `ObjectRef` of `s`, waiting up to `timeout` seconds (None: forever);
  /// raises `StopIteration` at the end and the writer's error after its last item.
  py_ref next_item(py_stream& s, std::optional<double> timeout);
  /// The values of `refs` in order, waiting up to `timeout` seconds in all (None:
  /// forever).
  nb::list get(const std::vector<const py_ref*>& refs, std::optional<double> timeout);
  /// Which of `refs` are ready once `k` are or `timeout` seconds passed.
  std::vector<bool> wait(const std::vector<const py_ref*>& refs, size_t k,
                         std::optional<double> timeout);
  bool cancel(const py_ref& ref, bool force);
  void kill(const py_actor& actor, bool restart);

  std::vector<std::string> functions() const;
  std::vector<std::string> actor_types() const;
  /// The function's or actor type's signature as the cluster compares them.
  std::string signature(const std::string& name) const;
  /// The methods of an actor type.
  std::vector<std::string> methods(const std::string& type) const;
  size_t wait_for_nodes(size_t n, double timeout);
  std::string node_name() const;
  /// Stops the runtime (leaves the cluster); later calls raise `SwarmError`.
  void shutdown();
  bool running() const { return rt_ != nullptr; }

private:
  // The runtime; raises `SwarmError` once shut down.
  runtime& rt() const;
  // Raise `ValueError` for a ref, an actor or a stream (`what`) of another (shut down)
  // session.
  void check_owner(const py_ref& r) const;
  void check_owner(const std::shared_ptr<session>& owner, const char* what) const;
  std::vector<dynamic_arg>
  arguments(const std::string& what,
            const std::vector<const detail::type_descriptor*>& params, nb::tuple args);

  application app_;
  std::unique_ptr<runtime> rt_;
  std::unique_ptr<dynamic_calls> calls_;
  shape_cache shapes_;
  lent_vectors lent_;
};

/// Raises the Python exception of `e`: `TypeError` for a type mismatch, `ValueError`
/// for an invalid argument, or one of the package's `SwarmError` classes.
[[noreturn]] void raise_error(const error& e);

} // namespace swarm::python
