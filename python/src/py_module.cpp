// The extension module `swarm._swarm`: the `swarm` package (python/swarm) wraps it.

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "framework/version.hpp"
#include "python/src/py_session.hpp"

namespace nb = nanobind;
using namespace nb::literals;
using swarm::python::py_actor;
using swarm::python::py_ref;
using swarm::python::py_stream;
using swarm::python::session;
using swarm::python::session_options;

namespace {

// Makes exception class `name` of the module, derived from `bases`.
nb::object add_exception(nb::module_& m, const char* name, nb::handle bases,
                         const char* doc) {
  auto full = std::string{"swarm."} + name;
  nb::object cls =
      nb::steal(PyErr_NewExceptionWithDoc(full.c_str(), doc, bases.ptr(), nullptr));
  if (!cls) throw nb::python_error();
  m.attr(name) = cls;
  return cls;
}

} // namespace

NB_MODULE(_swarm, m) {
  m.doc() = "Swarm's C++ runtime, as the swarm package uses it.";
  m.attr("version") = SWARM_VERSION;

  auto error = add_exception(m, "SwarmError", PyExc_Exception,
                             "An error of Swarm's; `code` names its kind.");
  auto task =
      add_exception(m, "TaskError", error,
                    "A task or actor call failed: its code threw, its worker died "
                    "or an argument's task failed.");
  add_exception(m, "TaskCancelledError", task, "The task was cancelled.");
  add_exception(m, "ActorDiedError", error, "The actor died and will not be restarted.");
  add_exception(m, "ObjectLostError", error,
                "The object was lost (its node died and it could not be remade), freed "
                "or its owner died.");
  add_exception(m, "GetTimeoutError",
                nb::make_tuple(error, nb::handle(PyExc_TimeoutError)),
                "A wait ended before the object was ready.");

  nb::class_<py_ref>(m, "ObjectRef",
                     "A future: names an object a task, an actor call or "
                     "put makes, possibly not yet.")
      .def_prop_ro(
          "id", [](const py_ref& r) { return r.ref.id().to_string(); },
          "The object's id.")
      .def_prop_ro(
          "type_name", [](const py_ref& r) { return r.ref.type().name; },
          "The C++ type of its value.")
      .def(
          "ready", [](const py_ref& r) { return r.ref.ready(); },
          "Whether the value (or its error) exists yet.")
      .def(
          "get",
          [](const py_ref& r, std::optional<double> timeout) {
            nb::list values = r.owner->get({&r}, timeout);
            return nb::object{values[0]};
          },
          "timeout"_a = nb::none(),
          "Waits up to `timeout` seconds (None: forever) and returns the value.")
      .def("__eq__",
           [](const py_ref& a, nb::handle b) {
             return nb::isinstance<py_ref>(b) &&
                    a.ref.id() == nb::cast<const py_ref&>(b).ref.id();
           })
      .def("__hash__",
           [](const py_ref& r) {
             return std::hash<std::string>{}(r.ref.id().to_string());
           })
      .def("__repr__", [](const py_ref& r) {
        return "ObjectRef(" + r.ref.id().to_string() + ", " + r.ref.type().name + ")";
      });

  nb::class_<py_stream>(
      m, "ObjectRefStream",
      "The items of a streaming task or actor call, as ObjectRefs in the "
      "order they were written; dropping it before the end cancels the "
      "task.")
      .def("__iter__", [](nb::handle self) { return self; })
      .def("__next__", [](py_stream& s) { return s.owner->next_item(s, std::nullopt); })
      .def(
          "next",
          [](py_stream& s, std::optional<double> timeout) {
            return s.owner->next_item(s, timeout);
          },
          "timeout"_a = nb::none(),
          "The next item's ObjectRef, waiting up to `timeout` seconds; StopIteration at "
          "the end.")
      .def(
          "done",
          [](const py_stream& s) {
            return py_ref{s.stream.done(), s.owner};
          },
          "An ObjectRef of how many items the task wrote, or its error.")
      .def(
          "cancel", [](py_stream& s) { s.stream.cancel(); },
          "Cancels the task: it stops at its next write.")
      .def_prop_ro("item_type_name",
                   [](const py_stream& s) { return s.stream.item_type().name; });

  nb::class_<py_actor>(m, "Actor", "An actor created by its type's registered name.")
      .def_prop_ro("type_name", [](const py_actor& a) { return a.actor.type().name; })
      .def_prop_ro("alive", [](const py_actor& a) { return a.actor.alive(); })
      .def_prop_ro("death_reason",
                   [](const py_actor& a) { return a.actor.death_reason(); });

  nb::class_<session>(m, "Session",
                      "A process's Swarm: a client of a cluster, or an "
                      "embedded node (made by start).")
      .def("submit", &session::submit, "function"_a, "args"_a, "options"_a)
      .def("put", &session::put, "value"_a)
      .def("empty", &session::empty, "n"_a, "kind"_a, "itemsize"_a)
      .def("spawn", &session::spawn, "type"_a, "args"_a, "options"_a)
      .def("call", &session::call, "actor"_a, "method"_a, "args"_a, "options"_a)
      .def("get", &session::get, "refs"_a, "timeout"_a = nb::none())
      .def("wait", &session::wait, "refs"_a, "num_returns"_a, "timeout"_a = nb::none())
      .def("cancel", &session::cancel, "ref"_a, "force"_a = false)
      .def("kill", &session::kill, "actor"_a, "restart"_a = false)
      .def("functions", &session::functions)
      .def("actor_types", &session::actor_types)
      .def("signature", &session::signature, "name"_a)
      .def("methods", &session::methods, "type"_a)
      .def("wait_for_nodes", &session::wait_for_nodes, "n"_a, "timeout"_a)
      .def_prop_ro("node_name", &session::node_name)
      .def_prop_ro("running", &session::running)
      .def("shutdown", &session::shutdown);

  // Sessions are shared: the refs and actors they made keep them (and the libraries of
  // user code their values' types come from) alive.
  m.def(
      "start",
      [](std::optional<std::string> address, std::string secret,
         std::vector<std::string> libraries, std::string name, double timeout,
         std::optional<double> cpus) {
        session_options o;
        o.address = address.value_or("");
        o.secret = std::move(secret);
        o.libraries = std::move(libraries);
        o.name = std::move(name);
        o.timeout = std::chrono::milliseconds{static_cast<int64_t>(timeout * 1000)};
        o.cpus = cpus;
        return std::make_shared<session>(o);
      },
      "address"_a = nb::none(), "secret"_a = "",
      "libraries"_a = std::vector<std::string>{}, "name"_a = "", "timeout"_a = 10.0,
      "num_cpus"_a = nb::none(),
      "Starts a session: a client of the cluster whose head is at `address` "
      "(host:port), or an embedded node when it is None.");
}
