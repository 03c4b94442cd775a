"""Swarm from Python: submit the C++ tasks and actors of a Swarm cluster by name.

    import swarm
    swarm.init("127.0.0.1:7000", secret="...", libraries=["./libmycode.so"])
    add = swarm.function("add")
    print(swarm.get(add.remote(1, 2)))

The functions and actor types are those the library of user code registers (the same
library the cluster's nodes load with `swarm start --load`); values convert to and from
their C++ parameter and result types, NumPy arrays to and from vectors of numbers.
"""

import asyncio
import atexit
import concurrent.futures
import os
import sys
import threading

# A library of user code loaded by the session finds Swarm's symbols in the extension
# module: import it with RTLD_GLOBAL.
_flags = sys.getdlopenflags()
sys.setdlopenflags(_flags | os.RTLD_GLOBAL)
try:
    from . import _swarm
finally:
    sys.setdlopenflags(_flags)

from ._swarm import (  # noqa: E402
    ActorDiedError,
    GetTimeoutError,
    ObjectLostError,
    ObjectRef,
    ObjectRefStream,
    SwarmError,
    TaskCancelledError,
    TaskError,
)

__version__ = _swarm.version


def _future(self):
    """A concurrent.futures.Future of the value, as Ray's ObjectRef.future(): a daemon
    thread waits for it (get releases the GIL while it waits)."""
    future = concurrent.futures.Future()

    def wait():
        try:
            future.set_result(self.get())
        except BaseException as e:  # the value's error, raised where it is read
            future.set_exception(e)
    threading.Thread(target=wait, name="swarm-wait", daemon=True).start()
    return future


def _await(self):
    return asyncio.wrap_future(self.future()).__await__()


ObjectRef.future = _future
ObjectRef.__await__ = _await
__all__ = [
    "init", "shutdown", "is_initialized", "function", "actor_type", "put", "empty", "get",
    "wait",
    "cancel", "kill", "functions", "actor_types", "wait_for_nodes", "node_name",
    "ObjectRef", "ObjectRefStream", "ActorHandle", "RemoteFunction", "ActorClass", "SwarmError", "TaskError",
    "TaskCancelledError", "ActorDiedError", "ObjectLostError", "GetTimeoutError",
]

_session = None


def init(address=None, *, secret=None, libraries=(), name="", timeout=10.0, num_cpus=None):
    """Connects to a running cluster as a client, or starts an embedded node.

    address: the head's "host:port"; None takes SWARM_ADDRESS from the environment (as
    `swarm job submit` sets it) and, without it, starts an embedded node in this process.
    secret: the cluster's secret; None takes SWARM_SECRET.
    libraries: paths of libraries of user code (built with SWARM_REGISTER) whose functions
    and actor types this process calls; SWARM_LIBRARIES (':'-separated) adds to them.
    """
    global _session
    if _session is not None and _session.running:
        raise SwarmError("swarm.init was called already: call swarm.shutdown() first")
    if address is None:
        address = os.environ.get("SWARM_ADDRESS") or None
    if secret is None:
        secret = os.environ.get("SWARM_SECRET", "")
    libs = [os.fspath(p) for p in libraries]
    libs += [p for p in os.environ.get("SWARM_LIBRARIES", "").split(":") if p]
    _session = _swarm.start(address, secret, libs, name, float(timeout), num_cpus)
    return _session


def shutdown():
    """Leaves the cluster (or stops the embedded node). Refs still held fail to read."""
    global _session
    if _session is not None:
        _session.shutdown()
    _session = None


# A client leaves its cluster (which frees what it owned there) when the program exits.
atexit.register(shutdown)


def is_initialized():
    return _session is not None and _session.running


def _current():
    if _session is None:
        raise SwarmError("swarm is not initialized: call swarm.init() first")
    return _session


class _WithOptions:
    """A named call target with keyword options, copied by `options`."""

    def __init__(self, name, options=None):
        self._name = name
        self._options = dict(options or {})

    @property
    def name(self):
        return self._name

    def _merged(self, options):
        merged = dict(self._options)
        merged.update(options)
        return merged


class RemoteFunction(_WithOptions):
    """A registered C++ function: `.remote(*args)` runs it and returns an ObjectRef (an
    ObjectRefStream of its items for a streaming function)."""

    @property
    def signature(self):
        return _current().signature(self._name)

    def options(self, **options):
        """A copy with these options: num_cpus, num_gpus, memory, resources (a dict),
        priority, max_retries, retry_exceptions, node, stream_window."""
        return RemoteFunction(self._name, self._merged(options))

    def remote(self, *args, **options):
        return _current().submit(self._name, args, self._merged(options))

    def __repr__(self):
        return f"RemoteFunction({self._name!r})"


class ActorMethod(_WithOptions):
    """A method of an actor: `.remote(*args)` calls it and returns an ObjectRef (an
    ObjectRefStream for a streaming method); options: priority, stream_window."""

    def __init__(self, handle, name, options=None):
        super().__init__(name, options)
        self._handle = handle

    def options(self, **options):
        return ActorMethod(self._handle, self._name, self._merged(options))

    def remote(self, *args, **options):
        return self._handle._session.call(self._handle._actor, self._name, args,
                                          self._merged(options))


class ActorHandle:
    """An actor: `handle.method.remote(*args)` calls its registered method."""

    def __init__(self, session, actor):
        self._session = session
        self._actor = actor

    @property
    def type_name(self):
        return self._actor.type_name

    @property
    def alive(self):
        return self._actor.alive

    @property
    def death_reason(self):
        return self._actor.death_reason

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in self._session.methods(self._actor.type_name):
            raise AttributeError(
                f"actor type {self._actor.type_name!r} has no registered method {name!r}: "
                f"it has {', '.join(self._session.methods(self._actor.type_name)) or 'none'}")
        return ActorMethod(self, name)

    def __dir__(self):
        return list(super().__dir__()) + self._session.methods(self._actor.type_name)

    def __repr__(self):
        return f"ActorHandle({self._actor.type_name!r}, alive={self._actor.alive})"


class ActorClass(_WithOptions):
    """A registered C++ actor type: `.remote(*args)` creates one and returns its handle."""

    def options(self, **options):
        """A copy with these options: num_cpus, num_gpus, memory, resources, name,
        max_restarts, max_task_retries, max_concurrency, node, move_if_node_lost (a
        pinned actor whose node is lost restarts elsewhere instead of waiting for it)."""
        return ActorClass(self._name, self._merged(options))

    def remote(self, *args, **options):
        session = _current()
        return ActorHandle(session, session.spawn(self._name, args, self._merged(options)))

    def __repr__(self):
        return f"ActorClass({self._name!r})"


def _registered(what, name, names):
    if name not in names:
        raise SwarmError(f"no {what} {name!r} is registered here: the libraries loaded "
                         f"register {', '.join(names) or 'none'}")
    return name


def function(name):
    """The registered C++ function `name`, to call with `.remote(*args, **options)`."""
    return RemoteFunction(_registered("function", name, _current().functions()))


def actor_type(name):
    """The registered C++ actor type `name`, to create with `.remote(*args, **options)`."""
    return ActorClass(_registered("actor type", name, _current().actor_types()))


def put(value):
    """Stores `value` and returns its ObjectRef (see the package's docs for the types)."""
    return _current().put(value)


def empty(n, dtype="float32"):
    """A writable 1-D NumPy array of `n` zeros in memory Swarm's store can keep. Fill it,
    then `put` it or pass it to a function that takes a vector of its dtype: it is taken
    without a copy, and is read-only from then on (do not write it through other views).
    """
    import numpy
    dt = numpy.dtype(dtype)
    return _current().empty(int(n), dt.kind, dt.itemsize)


def get(refs, *, timeout=None):
    """The value of an ObjectRef, or the values of a list of them, waiting up to
    `timeout` seconds in all (None: forever); raises the error a ref holds."""
    session = _current()
    if isinstance(refs, ObjectRef):
        return session.get([refs], timeout)[0]
    return session.get(list(refs), timeout)


def wait(refs, *, num_returns=1, timeout=None):
    """Waits until `num_returns` of `refs` are ready or `timeout` seconds passed; returns
    (ready, not_ready), each in the order of `refs`."""
    refs = list(refs)
    if num_returns < 0 or num_returns > len(refs):
        raise ValueError(f"num_returns must be between 0 and {len(refs)}, got {num_returns}")
    done = _current().wait(refs, num_returns, timeout)
    return ([r for r, d in zip(refs, done) if d], [r for r, d in zip(refs, done) if not d])


def cancel(ref, *, force=False):
    """Cancels the task of `ref`: not started, it never runs; running, it is asked to stop
    (with force, its result is dropped at once). False when it had finished."""
    return _current().cancel(ref, force)


def kill(actor, *, restart=False):
    """Stops an actor; with `restart`, it is restarted if its policy allows."""
    actor._session.kill(actor._actor, restart)


def functions():
    """The names of the functions registered here."""
    return _current().functions()


def actor_types():
    """The names of the actor types registered here."""
    return _current().actor_types()


def wait_for_nodes(n, timeout=30.0):
    """Waits up to `timeout` seconds until `n` nodes of the cluster are alive; how many are."""
    return _current().wait_for_nodes(n, float(timeout))


def node_name():
    """This process's node name in the cluster."""
    return _current().node_name
