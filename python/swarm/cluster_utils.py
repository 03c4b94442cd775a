"""A cluster of `swarm start` node processes on 127.0.0.1, for tests and benchmarks (as
Ray's ray.cluster_utils.Cluster): a head and workers, each loading the libraries given."""

import os
import random
import signal
import socket
import subprocess
import tempfile
import time


def _free_port(taken=()):
    # Below the kernel's ephemeral range (32768 up), where the nodes' own outgoing
    # connections could take it before the node listens; clear of the ports the nodes of
    # `taken` serve their metrics (port + 1000) and dashboard (port + 2000) on.
    for _ in range(1000):
        port = random.randrange(20000, 30000)
        if any(abs(port - t) in (0, 1000, 2000) for t in taken):
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise OSError("no free port between 20000 and 32000")


class Cluster:
    """Starts `workers` worker nodes (offering `worker_resources` beside their CPUs) and a
    head (1 CPU) with the `swarm` tool at `cli`; `stop()` (or leaving a `with` block)
    stops them. Connect with `swarm.init(cluster.address, secret=cluster.secret, ...)`."""

    secret = "the-secret-of-a-local-python-cluster"

    def __init__(self, cli, libraries=(), workers=2, worker_cpus=2,
                 worker_resources=None):
        self.dir = tempfile.mkdtemp(prefix="swarm-python-")
        names = ["head"] + [f"worker-{i}" for i in range(1, workers + 1)]
        self.ports = {}
        for name in names:
            self.ports[name] = _free_port(self.ports.values())
        resources = worker_resources if worker_resources is not None else {"worker": 8}
        rows = []
        for name, port in self.ports.items():
            rows.append(f'[[node]]\nname = "{name}"\naddress = "127.0.0.1"\nport = {port}\n')
            if name == "head":
                rows.append('role = "head"\ncpus = 1\n')
            else:
                rows.append(f"cpus = {worker_cpus}\n")
                if resources:
                    pairs = ", ".join(f"{k} = {v}" for k, v in resources.items())
                    rows.append(f"resources = {{ {pairs} }}\n")
        self.config = os.path.join(self.dir, "cluster.toml")
        with open(self.config, "w") as f:
            f.write(f'[cluster]\nname = "python"\nsecret = "{self.secret}"\n'
                    "heartbeat_ms = 100\nnode_timeout_ms = 1500\n")
            f.write("".join(rows))
        load = []
        for lib in libraries:
            load += ["--load", os.fspath(lib)]
        self.procs = {}
        for name in self.ports:
            with open(os.path.join(self.dir, name + ".log"), "w") as log:
                self.procs[name] = subprocess.Popen(
                    [cli, "start", "--config", self.config, "--node", name] + load,
                    stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    @property
    def address(self):
        """The head's "host:port"."""
        return f"127.0.0.1:{self.ports['head']}"

    @property
    def workers(self):
        return [n for n in self.ports if n != "head"]

    def logs(self):
        """Every node's output so far."""
        out = []
        for name in self.ports:
            with open(os.path.join(self.dir, name + ".log")) as f:
                out.append(f"--- {name}\n{f.read()}")
        return "\n".join(out)

    def kill(self, name):
        """Kills node `name` at once (SIGKILL), as a machine that fails."""
        self.procs[name].send_signal(signal.SIGKILL)
        self.procs[name].wait(timeout=10)

    def dead(self):
        """The nodes whose process ended."""
        return [n for n, p in self.procs.items() if p.poll() is not None]

    def stop(self, timeout=15.0):
        """Stops every node (SIGTERM; SIGKILL for one still running after `timeout`)."""
        for p in self.procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for p in self.procs.values():
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=5)

    def connect(self, swarm, libraries=(), timeout=30.0):
        """Connects this process with `swarm.init` once the head answers, and waits until
        every node and this client are alive; raises naming the nodes' output otherwise."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                swarm.init(self.address, secret=self.secret, libraries=libraries, timeout=2)
                break
            except swarm.SwarmError:
                if time.monotonic() > deadline or self.dead():
                    raise swarm.SwarmError("the cluster did not form:\n" + self.logs())
                time.sleep(0.2)
        want = len(self.ports) + 1  # this client too
        left = max(1.0, deadline - time.monotonic())
        if swarm.wait_for_nodes(want, timeout=left) < want:
            raise swarm.SwarmError("not every node joined:\n" + self.logs())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
