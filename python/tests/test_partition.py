"""Partitions across network namespaces: a head and two workers, each in a namespace of
its own, joined by a bridge in a fourth. worker-1 is cut off both ways, or one way in
either direction, by neighbour entries that send its frames (or the others' frames to
it) to a hardware address nobody has. Needs root and `ip`; skipped otherwise."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

SECRET = "the-partition-test-secret"
NODES = ["head", "worker-1", "worker-2"]
NOWHERE = "02:00:00:00:00:99"  # a locally administered address no interface has


def _ip(*args, check=True):
    return subprocess.run(["ip", *args], check=check, capture_output=True, text=True)


class Bed:
    """Three node namespaces on a bridge (in a hub namespace); all gone on `close`."""

    def __init__(self):
        tag = "swp%x" % (os.getpid() & 0xFFFFF)
        self.hub = tag + "h"
        self.ns = [f"{tag}n{i}" for i in range(len(NODES))]
        self.addr = [f"10.77.0.{i + 1}" for i in range(len(NODES))]

    def up(self):
        _ip("netns", "add", self.hub)
        _ip("-n", self.hub, "link", "add", "br0", "type", "bridge")
        _ip("-n", self.hub, "link", "set", "br0", "up")
        for i, ns in enumerate(self.ns):
            _ip("netns", "add", ns)
            _ip("-n", self.hub, "link", "add", f"v{i}", "type", "veth", "peer", "name", f"b{i}")
            _ip("-n", self.hub, "link", "set", f"v{i}", "netns", ns)
            _ip("-n", ns, "link", "set", f"v{i}", "name", "eth0")
            _ip("-n", ns, "addr", "add", f"{self.addr[i]}/24", "dev", "eth0")
            _ip("-n", ns, "link", "set", "eth0", "up")
            _ip("-n", ns, "link", "set", "lo", "up")
            _ip("-n", self.hub, "link", "set", f"b{i}", "master", "br0")
            _ip("-n", self.hub, "link", "set", f"b{i}", "up")

    def close(self):
        for ns in self.ns + [self.hub]:
            _ip("netns", "del", ns, check=False)


def _bed_or_skip():
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("network namespaces need root and ip")
    bed = Bed()
    try:
        bed.up()
    except subprocess.CalledProcessError as e:
        bed.close()
        pytest.skip(f"cannot make network namespaces here: {e.stderr.strip()}")
    return bed


# Runs in the head's namespace as a client of the cluster: for each way of cutting
# worker-1 off, three named actors pinned there (allowed to move) are cut off with it,
# restarted elsewhere, and once the cut heals the cluster has one live instance of each
# name. Prints one JSON line per way.
DRIVER = r"""
import json, os, subprocess, sys, time
import swarm

cli, config, code = sys.argv[1:4]
ns = sys.argv[4].split(",")
addr = sys.argv[5].split(",")
NOWHERE = "02:00:00:00:00:99"

def ip(*a):
    subprocess.run(["ip", *a], check=True, capture_output=True)

def cut(outgoing, incoming):
    for j in (0, 2):
        if outgoing:  # worker-1's frames to j go nowhere
            ip("-n", ns[1], "neigh", "replace", addr[j], "lladdr", NOWHERE, "nud", "permanent", "dev", "eth0")
        if incoming:  # j's frames to worker-1 go nowhere
            ip("-n", ns[j], "neigh", "replace", addr[1], "lladdr", NOWHERE, "nud", "permanent", "dev", "eth0")

def heal():
    for n in ns:
        ip("-n", n, "neigh", "flush", "dev", "eth0", "nud", "all")

def alive_rows(prefix):
    out = subprocess.run([cli, "list", "actors", "--config", config], capture_output=True,
                         text=True, timeout=30).stdout
    rows = [l.split() for l in out.splitlines()[1:]]
    return sorted(r[1] for r in rows if len(r) >= 4 and r[1].startswith(prefix) and r[3] == "alive")

def until(pred, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.2)
    return pred()

deadline = time.monotonic() + 30
while True:
    try:
        swarm.init(f"{addr[0]}:7700", secret=os.environ["SWARM_SECRET"], libraries=[code], timeout=2)
        break
    except swarm.SwarmError:
        if time.monotonic() > deadline:
            raise
        time.sleep(0.2)
assert swarm.wait_for_nodes(4, timeout=30) == 4
counter = swarm.actor_type("counter")
for way, outgoing, incoming in (("both", True, True), ("out", True, False), ("in", False, True)):
    names = [f"{way}-{k}" for k in range(3)]
    actors = [counter.options(name=n, node="worker-1", move_if_node_lost=True,
                              max_restarts=5, max_task_retries=5).remote(0) for n in names]
    homes = [swarm.get(a.home.remote(), timeout=30) for a in actors]
    cut(outgoing, incoming)
    moved = [swarm.get(a.home.remote(), timeout=60) for a in actors]
    heal()
    rejoined = swarm.wait_for_nodes(4, timeout=60) == 4
    single = until(lambda: alive_rows(way + "-") == names, 30)
    print(json.dumps({"way": way, "homes": homes, "moved": moved, "rejoined": rejoined,
                      "alive": alive_rows(way + "-")}), flush=True)
swarm.shutdown()
"""


def test_a_worker_cut_off_both_ways_or_one_way_leaves_one_live_instance_per_actor_name():
    cli = os.environ.get("SWARM_CLI")
    code = os.environ.get("SWARM_PY_TEST_CODE")
    if not cli or not code:
        pytest.skip("SWARM_CLI and SWARM_PY_TEST_CODE are set by ctest")
    bed = _bed_or_skip()
    work = tempfile.mkdtemp(prefix="swarm-partition-")
    procs = []
    try:
        config = os.path.join(work, "cluster.toml")
        rows = []
        for i, name in enumerate(NODES):
            rows.append(f'[[node]]\nname = "{name}"\naddress = "{bed.addr[i]}"\nport = 7700\n'
                        f'cpus = {2 if name == "head" else 1}\n')
            if name == "head":
                rows.append('role = "head"\n')
        with open(config, "w") as f:
            f.write(f'[cluster]\nname = "partition"\nsecret = "{SECRET}"\n'
                    "heartbeat_ms = 100\nnode_timeout_ms = 1000\n" + "".join(rows))
        for i, name in enumerate(NODES):
            log = open(os.path.join(work, name + ".log"), "w")
            procs.append(subprocess.Popen(
                ["ip", "netns", "exec", bed.ns[i], cli, "start", "--config", config,
                 "--node", name, "--load", code],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
        env = dict(os.environ, SWARM_SECRET=SECRET)
        run = subprocess.run(
            ["ip", "netns", "exec", bed.ns[0], sys.executable, "-c", DRIVER, cli, config,
             code, ",".join(bed.ns), ",".join(bed.addr)],
            capture_output=True, text=True, timeout=240, env=env)
        logs = "\n".join(f"--- {n}\n" + open(os.path.join(work, n + ".log")).read()
                         for n in NODES)
        assert run.returncode == 0, run.stdout + run.stderr + logs
        results = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
        assert [r["way"] for r in results] == ["both", "out", "in"], run.stdout
        for r in results:
            assert r["homes"] == ["worker-1"] * 3, r
            assert all(m != "worker-1" for m in r["moved"]), r
            assert r["rejoined"], (r, logs)
            # One live instance per name: the stale ones on worker-1 were stopped.
            assert r["alive"] == [f"{r['way']}-{k}" for k in range(3)], (r, logs)
        assert "joins again as a new life" in logs
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
        bed.close()
        shutil.rmtree(work, ignore_errors=True)
