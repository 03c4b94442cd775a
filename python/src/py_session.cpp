#include "python/src/py_session.hpp"

#include <nanobind/stl/string.h>

#include "framework/tls_env.hpp"

#include <cmath>
#include <utility>

namespace swarm::python {

namespace {

std::chrono::milliseconds to_timeout(std::optional<double> seconds) {
  if (!seconds) return forever;
  if (!(*seconds >= 0) || !std::isfinite(*seconds))
    throw nb::value_error("timeout must be None or a finite number of seconds >= 0");
  return std::chrono::milliseconds{static_cast<int64_t>(std::ceil(*seconds * 1000))};
}

// The options `options` gives, checked as `accepted` names them; `set(key, value)`
// applies one and returns false for a key it does not know.
template <class Set>
void read_options(const std::string& what, nb::dict options, const char* accepted,
                  Set&& set) {
  for (auto [k, v] : options) {
    auto key = nb::cast<std::string>(k);
    bool known = false;
    try {
      known = set(key, v);
    } catch (const nb::cast_error&) {
      throw nb::type_error((what + ": option " + key + " has the wrong type (" +
                            Py_TYPE(v.ptr())->tp_name + ")")
                               .c_str());
    }
    if (!known)
      throw nb::type_error(
          (what + ": unknown option '" + key + "'; it takes " + accepted).c_str());
  }
}

bool set_resources(resource_set& r, const std::string& key, nb::handle v) {
  if (key == "num_cpus")
    r.set("CPU", nb::cast<double>(v));
  else if (key == "num_gpus")
    r.set("GPU", nb::cast<double>(v));
  else if (key == "memory")
    r.set("memory", nb::cast<double>(v));
  else if (key == "resources")
    for (auto [name, amount] : nb::borrow<nb::dict>(v))
      r.set(nb::cast<std::string>(name), nb::cast<double>(amount));
  else
    return false;
  return true;
}

} // namespace

void raise_error(const error& e) {
  auto message = e.to_string();
  if (e.code == errc::type_mismatch) throw nb::type_error(message.c_str());
  if (e.code == errc::invalid_argument) throw nb::value_error(message.c_str());
  const char* cls = "SwarmError";
  switch (e.code) {
  case errc::timeout:
    cls = "GetTimeoutError";
    break;
  case errc::actor_died:
    cls = "ActorDiedError";
    break;
  case errc::cancelled:
    cls = "TaskCancelledError";
    break;
  case errc::object_lost:
  case errc::object_freed:
  case errc::owner_died:
    cls = "ObjectLostError";
    break;
  case errc::application_error:
  case errc::worker_died:
  case errc::dependency_failed:
  case errc::device_failed:
  case errc::device_error:
  case errc::device_out_of_memory:
    cls = "TaskError";
    break;
  default:
    break;
  }
  nb::object type = nb::module_::import_("swarm._swarm").attr(cls);
  nb::object exc = type(message);
  exc.attr("code") = to_string(e.code);
  PyErr_SetObject(type.ptr(), exc.ptr());
  throw nb::python_error();
}

session::session(const session_options& opts) {
  for (auto& lib : opts.libraries)
    if (auto ok = app_.load_library(lib); !ok) raise_error(ok.err());
  try {
    nb::gil_scoped_release unlocked;
    if (opts.address.empty()) {
      runtime_config cfg;
      cfg.cpus = opts.cpus;
      rt_ = std::make_unique<runtime>(app_, cfg);
    } else {
      auto client = head_address(opts.address, "the address given to swarm.init");
      if (!client) throw failure{client.err()};
      client->secret = opts.secret;
      // As a job's or a program's environment says (SWARM_TLS and its peers).
      auto tls = tls_from_env();
      if (!tls) throw failure{tls.err()};
      client->tls = *tls;
      client->name = opts.name;
      client->timeout = opts.timeout;
      rt_ = std::make_unique<runtime>(app_, *client);
    }
  } catch (const failure& f) {
    raise_error(f.err());
  } catch (const std::exception& e) {
    raise_error({errc::node_unreachable, e.what()});
  }
  calls_ = std::make_unique<dynamic_calls>(*rt_);
}

session::~session() {
  if (rt_) {
    nb::gil_scoped_release unlocked;
    calls_.reset();
    rt_.reset();
  }
}

void session::check_owner(const py_ref& r) const {
  if (r.owner.get() != this)
    raise_error({errc::invalid_argument, "ObjectRef " + r.ref.id().to_string() +
                                             " was made by a session that was shut "
                                             "down: its object is gone"});
}

void session::check_owner(const std::shared_ptr<session>& owner, const char* what) const {
  if (owner.get() != this)
    raise_error(
        {errc::invalid_argument,
         std::string{"the "} + what + " was made by a session that was shut down"});
}

runtime& session::rt() const {
  if (!rt_)
    raise_error({errc::runtime_stopped, "swarm was shut down: call swarm.init() again"});
  return *rt_;
}

void session::shutdown() {
  if (!rt_) return;
  nb::gil_scoped_release unlocked;
  calls_.reset();
  rt_.reset();
}

std::vector<dynamic_arg>
session::arguments(const std::string& what,
                   const std::vector<const detail::type_descriptor*>& params,
                   nb::tuple args) {
  if (args.size() != params.size())
    throw nb::type_error((what + " takes " + std::to_string(params.size()) +
                          " argument(s), got " + std::to_string(args.size()))
                             .c_str());
  std::vector<dynamic_arg> out;
  out.reserve(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    nb::handle a = args[i];
    if (nb::isinstance<py_ref>(a)) {
      auto& r = nb::cast<const py_ref&>(a);
      check_owner(r);
      out.push_back({{}, r.ref});
      continue;
    }
    auto& t = *params[i];
    out.push_back({to_value(a, t, shapes_.of(t),
                            what + " argument " + std::to_string(i + 1), &lent_),
                   {}});
  }
  return out;
}

nb::object session::submit(const std::string& function, nb::tuple args,
                           nb::dict options) {
  rt();
  auto f = calls_->function(function);
  if (!f) raise_error(f.err());
  auto what = "function '" + function + "'";
  task_options opts;
  read_options(what, options,
               "num_cpus, num_gpus, memory, resources, priority, max_retries, "
               "retry_exceptions, node, stream_window",
               [&](const std::string& key, nb::handle v) {
                 if (set_resources(opts.resources, key, v)) return true;
                 if (key == "priority")
                   opts.priority = nb::cast<int32_t>(v);
                 else if (key == "max_retries")
                   opts.max_retries = nb::cast<uint32_t>(v);
                 else if (key == "retry_exceptions")
                   opts.retry_exceptions = nb::cast<bool>(v);
                 else if (key == "node")
                   opts.node = nb::cast<std::string>(v);
                 else if (key == "stream_window")
                   opts.stream_window = nb::cast<uint32_t>(v);
                 else
                   return false;
                 return true;
               });
  auto values = arguments(what, (*f)->params, args);
  if ((*f)->stream_item != nullptr) {
    auto s = calls_->submit_stream(**f, opts, std::move(values));
    if (!s) raise_error(s.err());
    return nb::cast(py_stream{std::move(*s), shared_from_this()});
  }
  auto ref = calls_->submit(**f, opts, std::move(values));
  if (!ref) raise_error(ref.err());
  return nb::cast(py_ref{std::move(*ref), shared_from_this()});
}

py_ref session::put(nb::handle value) {
  rt();
  if (nb::isinstance<py_ref>(value))
    throw nb::type_error("put of an ObjectRef: pass the ref itself where it is needed");
  auto& t = put_type(value);
  auto boxed = to_value(value, t, shapes_.of(t), "put", &lent_);
  try {
    return {calls_->put(std::move(boxed)), shared_from_this()};
  } catch (const failure& f) {
    raise_error(f.err());
  }
}

nb::object session::empty(size_t n, const std::string& kind, size_t itemsize) {
  shape e;
  e.kind = kind == "b" ? '?' : kind.empty() ? 'x' : kind[0];
  e.bytes = itemsize;
  if (!e.number())
    throw nb::type_error(
        ("swarm.empty makes arrays of numbers (int, uint, float), not of "
         "dtype kind '" +
         kind + "'")
            .c_str());
  return lent_.make(e, n);
}

py_actor session::spawn(const std::string& type, nb::tuple args, nb::dict options) {
  rt();
  auto info = calls_->actor_type(type);
  if (!info) raise_error(info.err());
  auto what = "actor type '" + type + "'";
  actor_options opts;
  read_options(what, options,
               "num_cpus, num_gpus, memory, resources, name, max_restarts, "
               "max_task_retries, max_concurrency, node, move_if_node_lost",
               [&](const std::string& key, nb::handle v) {
                 if (set_resources(opts.resources, key, v)) return true;
                 if (key == "name")
                   opts.name = nb::cast<std::string>(v);
                 else if (key == "max_restarts")
                   opts.max_restarts = nb::cast<uint32_t>(v);
                 else if (key == "max_task_retries")
                   opts.max_task_retries = nb::cast<uint32_t>(v);
                 else if (key == "max_concurrency")
                   opts.max_concurrency = nb::cast<uint32_t>(v);
                 else if (key == "node")
                   opts.node = nb::cast<std::string>(v);
                 else if (key == "move_if_node_lost")
                   opts.move_if_node_lost = nb::cast<bool>(v);
                 else
                   return false;
                 return true;
               });
  // The constructor whose parameter count matches; its types check the values.
  const detail::constructor_entry* ctor = nullptr;
  for (auto& c : (*info)->constructors)
    if (c.params.size() == args.size()) {
      ctor = &c;
      break;
    }
  if (ctor == nullptr)
    throw nb::type_error((what + " has no constructor taking " +
                          std::to_string(args.size()) + " argument(s): it has " +
                          (*info)->signature())
                             .c_str());
  std::vector<detail::boxed_value> values;
  for (auto& a : arguments(what + " constructor", ctor->params, args)) {
    if (a.ref.valid())
      throw nb::type_error(
          (what + ": constructor arguments are values, not ObjectRefs").c_str());
    values.push_back(std::move(a.value));
  }
  auto actor = calls_->spawn(**info, opts, std::move(values));
  if (!actor) raise_error(actor.err());
  return {std::move(*actor), shared_from_this()};
}

nb::object session::call(const py_actor& actor, const std::string& method, nb::tuple args,
                         nb::dict options) {
  rt();
  check_owner(actor.owner, "actor");
  auto& type = actor.actor.type();
  auto* m = type.find_method(method);
  auto what = "method '" + type.name + "." + method + "'";
  if (m == nullptr) {
    std::string names;
    for (auto& x : type.methods)
      names += (names.empty() ? "" : ", ") + x.name;
    throw nb::attribute_error(
        (what + " is not registered: it has " + (names.empty() ? "none" : names))
            .c_str());
  }
  int32_t priority = 0;
  uint32_t window = task_options{}.stream_window;
  read_options(what, options, "priority, stream_window",
               [&](const std::string& key, nb::handle v) {
                 if (key == "priority")
                   priority = nb::cast<int32_t>(v);
                 else if (key == "stream_window")
                   window = nb::cast<uint32_t>(v);
                 else
                   return false;
                 return true;
               });
  auto values = arguments(what, m->params, args);
  if (m->stream_item != nullptr) {
    auto s = calls_->call_stream(actor.actor, *m, std::move(values), window, priority);
    if (!s) raise_error(s.err());
    return nb::cast(py_stream{std::move(*s), shared_from_this()});
  }
  auto ref = calls_->call(actor.actor, *m, std::move(values), priority);
  if (!ref) raise_error(ref.err());
  return nb::cast(py_ref{std::move(*ref), shared_from_this()});
}

py_ref session::next_item(py_stream& s, std::optional<double> timeout) {
  rt();
  check_owner(s.owner, "stream");
  auto t = to_timeout(timeout);
  result<std::optional<dynamic_ref>> item = error{};
  {
    nb::gil_scoped_release unlocked;
    item = s.stream.next(t);
  }
  if (!item) raise_error(item.err());
  if (!*item) throw nb::stop_iteration();
  return {std::move(**item), shared_from_this()};
}

nb::list session::get(const std::vector<const py_ref*>& refs,
                      std::optional<double> timeout) {
  rt();
  auto deadline = detail::deadline_after(to_timeout(timeout));
  for (auto* r : refs)
    check_owner(*r);
  nb::list out;
  for (auto* r : refs) {
    result<std::shared_ptr<const void>> v = error{};
    {
      nb::gil_scoped_release unlocked;
      v = r->ref.get(detail::remaining(deadline));
    }
    if (!v) raise_error(v.err());
    auto& t = r->ref.type();
    out.append(to_python(std::move(*v), t, shapes_.of(t)));
  }
  return out;
}

std::vector<bool> session::wait(const std::vector<const py_ref*>& refs, size_t k,
                                std::optional<double> timeout) {
  rt();
  std::vector<dynamic_ref> plain;
  plain.reserve(refs.size());
  for (auto* r : refs) {
    check_owner(*r);
    plain.push_back(r->ref);
  }
  auto t = to_timeout(timeout);
  nb::gil_scoped_release unlocked;
  return calls_->wait(plain, k, t);
}

bool session::cancel(const py_ref& ref, bool force) {
  rt();
  check_owner(ref);
  return calls_->cancel(ref.ref, force);
}

void session::kill(const py_actor& actor, bool restart) {
  rt();
  check_owner(actor.owner, "actor");
  calls_->kill(actor.actor, restart);
}

std::vector<std::string> session::functions() const {
  return app_.function_names();
}

std::vector<std::string> session::actor_types() const {
  return app_.actor_type_names();
}

std::string session::signature(const std::string& name) const {
  if (auto f = app_.find_entry(name)) return (*f)->signature();
  if (auto* a = app_.actor_info(name)) return a->signature();
  raise_error({errc::unregistered, "no function or actor type '" + name +
                                       "' is registered (load its library)"});
}

std::vector<std::string> session::methods(const std::string& type) const {
  auto* a = app_.actor_info(type);
  if (a == nullptr)
    raise_error({errc::unregistered, "actor type '" + type + "' is not registered"});
  std::vector<std::string> out;
  for (auto& m : a->methods)
    out.push_back(m.name);
  return out;
}

size_t session::wait_for_nodes(size_t n, double timeout) {
  auto& r = rt();
  auto t = to_timeout(timeout);
  nb::gil_scoped_release unlocked;
  return r.wait_for_nodes(n, t);
}

std::string session::node_name() const {
  return rt().node_name();
}

} // namespace swarm::python
