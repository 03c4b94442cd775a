"""The Python driver's figures beside the C++ driver's, from one run on this machine.

    PYTHONPATH=build/python python3 bench/python_driver.py \
        --swarm build/bin/swarm --code build/python/libswarm_python_test_code.so \
        [--json out.json] [--reps 5] [--ray]

Starts a two-node cluster (a head and one worker, `swarm start` processes on 127.0.0.1),
connects as a client and measures, each the median of --reps repetitions:
  - python_tasks_async: tasks on the worker, all submitted then all read (tasks/s), beside
    `swarm bench --nodes 2`'s remote_single_client_tasks_async (the C++ driver, a node of
    its own two-node cluster, submitting to the other node);
  - python_actor_calls_sync: calls of an actor on the worker, each read before the next
    (calls/s), beside remote_1_1_actor_calls_sync;
  - python_put_empty_gigabytes: put of a 100 MB array made by swarm.empty (stored as it
    is, without a copy);
  - python_put_gigabytes / python_get_gigabytes: put and get of a 100 MB float32 NumPy
    array (GB/s; a get views the stored value), beside a NumPy copy of the same array;
  - python_remote_get_gigabytes: a task on the worker making a 100 MB array, read here
    (the task's work included), beside the C++ driver's remote_transfer_gigabytes.
With --ray, the same workloads with Ray (if it can be imported), beside them.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import swarm
from swarm.cluster_utils import Cluster

MB100 = 100 * 1000 * 1000


def median_of(reps, f):
    return statistics.median(f() for _ in range(reps))


def rate(n, f):
    t0 = time.perf_counter()
    f()
    return n / (time.perf_counter() - t0)


def gigabytes_per_s(nbytes, f):
    t0 = time.perf_counter()
    f()
    return nbytes / (time.perf_counter() - t0) / 1e9


def memcpy_floor(reps):
    src = np.ones(MB100 // 4, dtype=np.float32)
    dst = np.empty_like(src)
    np.copyto(dst, src)
    return median_of(reps, lambda: gigabytes_per_s(MB100, lambda: np.copyto(dst, src)))


def driver_figures(prefix, reps, add, add_call, get, put):
    """The workloads measured alike for Swarm and Ray: `add(a, b)` submits a task and
    `add_call(by)` calls an actor, each giving a ref; `get` reads a ref or a list of them;
    `put` stores an array."""
    out = {}
    get([add(i, i) for i in range(200)])  # warm-up
    n = 5000
    out[prefix + "_tasks_async"] = median_of(
        reps, lambda: rate(n, lambda: get([add(i, 1) for i in range(n)])))
    get([add_call(1) for _ in range(200)])
    calls = 2000

    def sync_calls():
        for _ in range(calls):
            get(add_call(1))
    out[prefix + "_actor_calls_sync"] = median_of(reps, lambda: rate(calls, sync_calls))
    array = np.ones(MB100 // 4, dtype=np.float32)
    refs = []
    out[prefix + "_put_gigabytes"] = median_of(
        reps, lambda: gigabytes_per_s(MB100, lambda: refs.append(put(array))))
    last = refs[-1]
    refs.clear()
    out[prefix + "_get_gigabytes"] = median_of(
        reps, lambda: gigabytes_per_s(MB100, lambda: get(last)))
    return out


def swarm_figures(cli, code, reps):
    with Cluster(cli, libraries=[code], workers=1) as cluster:
        cluster.connect(swarm, libraries=[code])
        try:
            on_worker = {"node": "worker-1"}
            add = swarm.function("add").options(**on_worker)
            counter = swarm.actor_type("counter").options(**on_worker).remote(0)
            out = driver_figures("python", reps, add.remote, counter.add.remote, swarm.get,
                                 swarm.put)
            refs = []

            def put_lent():
                filled = swarm.empty(MB100 // 4, np.float32)
                filled[:] = 1
                return gigabytes_per_s(MB100, lambda: refs.append(swarm.put(filled)))
            out["python_put_empty_gigabytes"] = median_of(reps, put_lent)
            refs.clear()

            # The task's 100 MB result crosses to this client; the task's own work (filling
            # it) is in the time too.
            ramp = swarm.function("ramp").options(**on_worker)
            out["python_remote_get_gigabytes"] = median_of(
                reps, lambda: gigabytes_per_s(MB100, lambda: swarm.get(ramp.remote(MB100 // 4))))
        finally:
            swarm.shutdown()
    return out


def cpp_figures(cli):
    out = {}
    for key, filt in [("remote_single_client_tasks_async", "remote_single_client_tasks_async"),
                      ("remote_1_1_actor_calls_sync", "remote_actor_calls"),
                      ("remote_transfer_gigabytes", "remote_transfer_gigabytes")]:
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            subprocess.run([cli, "bench", "--nodes", "2", "--quick", "--filter", filt,
                            "--json", f.name], check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=300)
            out[key] = json.load(open(f.name))[key]
    return out


def ray_figures(reps):
    try:
        import ray
    except ImportError:
        return None
    ray.init(num_cpus=2, include_dashboard=False)
    try:
        @ray.remote
        def add(a, b):
            return a + b

        @ray.remote
        class Counter:
            def __init__(self):
                self.n = 0

            def add(self, by):
                self.n += by
                return self.n
        out = driver_figures("ray", reps, add.remote, Counter.remote().add.remote, ray.get,
                             ray.put)
        out["ray_version"] = ray.__version__
        return out
    finally:
        ray.shutdown()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--swarm", required=True, help="the swarm tool")
    p.add_argument("--code", required=True, help="the library of the test code")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--json", help="write the figures here")
    p.add_argument("--ray", action="store_true", help="also measure Ray, if installed")
    args = p.parse_args()
    figures = {"memcpy_floor_gigabytes": memcpy_floor(args.reps)}
    figures.update(swarm_figures(args.swarm, os.path.abspath(args.code), args.reps))
    figures.update(cpp_figures(args.swarm))
    if args.ray:
        figures.update(ray_figures(args.reps) or {"ray": "not installed"})
    rows = [
        ("tasks async (tasks/s)", "python_tasks_async", "remote_single_client_tasks_async",
         "ray_tasks_async"),
        ("actor calls sync (calls/s)", "python_actor_calls_sync",
         "remote_1_1_actor_calls_sync", "ray_actor_calls_sync"),
        ("put 100 MB (GB/s)", "python_put_gigabytes", "memcpy_floor_gigabytes",
         "ray_put_gigabytes"),
        ("put 100 MB made by swarm.empty (GB/s; no copy)", "python_put_empty_gigabytes",
         "memcpy_floor_gigabytes", None),
        ("get 100 MB (GB/s)", "python_get_gigabytes", "memcpy_floor_gigabytes",
         "ray_get_gigabytes"),
        ("task on the worker making 100 MB, read here (GB/s)", "python_remote_get_gigabytes",
         "remote_transfer_gigabytes", None),
    ]
    print(f"{'workload':52} {'Python':>12} {'beside':>12} {'ratio':>7} {'Ray':>12}")
    for label, mine, other, ray_key in rows:
        ray_value = figures.get(ray_key) if ray_key else None
        ray_text = f"{ray_value:12.1f}" if isinstance(ray_value, float) else f"{'-':>12}"
        print(f"{label:52} {figures[mine]:12.1f} {figures[other]:12.1f} "
              f"{figures[mine] / figures[other]:7.2f} {ray_text}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
