"""Small tasks from one client over a cluster of N real node processes: throughput, and
the head's CPU per task (from /proc), to see whether the head is on the task path.

    PYTHONPATH=build/python python3 bench/client_tasks.py \
        --swarm build/bin/swarm --code build/python/libswarm_python_test_code.so \
        --nodes 64 [--tasks 100000]

Starts a head and N - 1 workers of 1 CPU (`swarm start` on 127.0.0.1), connects as a
client, measures the head's idle CPU for --idle-seconds, then submits --tasks `add`
tasks that only workers can run, all at once, and reads every result. Prints one line of
key=value: the head's CPU per task in all and above what it spends idle.
"""

import argparse
import os
import sys
import time
import urllib.request

import swarm
from swarm.cluster_utils import Cluster


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def frames(port):
    """The frames the node serving metrics on `port` sent and received, all lanes."""
    sent = received = 0
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        for line in r.read().decode().splitlines():
            if line.startswith("swarm_frames_sent_total"):
                sent += float(line.rsplit(" ", 1)[1])
            elif line.startswith("swarm_frames_received_total"):
                received += float(line.rsplit(" ", 1)[1])
    return sent, received


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--swarm", required=True)
    p.add_argument("--code", required=True)
    p.add_argument("--nodes", type=int, default=4)
    p.add_argument("--tasks", type=int, default=100_000)
    p.add_argument("--idle-seconds", type=float, default=3.0)
    a = p.parse_args()
    if a.nodes < 2:
        sys.exit("--nodes must be at least 2")
    with Cluster(a.swarm, libraries=[a.code], workers=a.nodes - 1, worker_cpus=1) as c:
        c.connect(swarm, libraries=[a.code], timeout=120)
        head = c.procs["head"].pid
        add = swarm.function("add").options(resources={"worker": 1})
        swarm.get([add.remote(i, i) for i in range(100)], timeout=60)  # warm-up
        # The head's CPU with nothing to do (heartbeats), to tell the tasks' share apart.
        idle0, i0 = cpu_seconds(head), time.monotonic()
        time.sleep(a.idle_seconds)
        idle_cores = (cpu_seconds(head) - idle0) / (time.monotonic() - i0)
        metrics = c.ports["head"] + 1000
        frames0 = frames(metrics)
        cpu0, t0 = cpu_seconds(head), time.monotonic()
        refs = [add.remote(i, i) for i in range(a.tasks)]
        got = swarm.get(refs, timeout=600)
        t1, cpu1 = time.monotonic(), cpu_seconds(head)
        frames1 = frames(metrics)
        if got != [2 * i for i in range(a.tasks)]:
            sys.exit("wrong results")
        print(f"nodes={a.nodes} tasks={a.tasks} tasks_per_s={a.tasks / (t1 - t0):.0f} "
              f"head_cpu_s={cpu1 - cpu0:.2f} "
              f"head_us_per_task={(cpu1 - cpu0) * 1e6 / a.tasks:.1f} "
              f"head_idle_cores={idle_cores:.3f} head_us_per_task_above_idle="
              f"{(cpu1 - cpu0 - idle_cores * (t1 - t0)) * 1e6 / a.tasks:.1f} "
              f"head_frames_out={frames1[0] - frames0[0]:.0f} "
              f"head_frames_in={frames1[1] - frames0[1]:.0f}")
        swarm.shutdown()


if __name__ == "__main__":
    main()
