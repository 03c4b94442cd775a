#!/usr/bin/env python3
"""Ray's side of `elastic_join_seconds`: a node added to a running Ray cluster on this
machine, from its start to the first task that only it can run returning to the driver.

Ray's own multi-node-on-one-machine harness (`ray.cluster_utils.Cluster`, what Ray's
tests use) starts each node: its raylet, object store and first workers. The cluster has
`--nodes` nodes of one CPU before each join (head included); each joined node has a
resource of its own, which the timed task demands, and is removed before the next one.

    python3 bench/ray_elastic.py --nodes 4 --reps 5 --json ray_elastic.json

Ray is imported from the Python that runs this (e.g. a venv with `pip install ray`).
"""

import argparse
import json
import statistics
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=4,
                    help="nodes before each join, the head included (default 4)")
    ap.add_argument("--reps", type=int, default=5, help="joins timed (default 5)")
    ap.add_argument("--json", help="write the figures here as well")
    args = ap.parse_args()
    if args.nodes < 1 or args.reps < 1:
        sys.exit("ray_elastic.py: --nodes and --reps must be at least 1")
    try:
        import ray
        from ray.cluster_utils import Cluster
    except ImportError as e:
        sys.exit(f"ray_elastic.py: Ray cannot be imported here: {e}")

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    try:
        for _ in range(args.nodes - 1):
            cluster.add_node(num_cpus=1)
        ray.init(address=cluster.address)
        cluster.wait_for_nodes()

        @ray.remote(num_cpus=0)
        def noop(x):
            return x

        ray.get(noop.remote(0))  # the driver's first task, before any timing
        joins = []
        for r in range(args.reps):
            own = f"joined_{r}"
            t0 = time.perf_counter()
            node = cluster.add_node(num_cpus=1, resources={own: 1})
            ray.get(noop.options(resources={own: 1}).remote(r), timeout=120)
            joins.append(time.perf_counter() - t0)
            cluster.remove_node(node)
            print(f"ray join {r + 1}/{args.reps}: {joins[-1]:.3f} s", file=sys.stderr)
    finally:
        ray.shutdown()
        cluster.shutdown()

    out = {
        "ray_version": ray.__version__,
        "nodes": args.nodes,
        "reps": args.reps,
        "ray_join_to_first_task_seconds": statistics.median(joins),
        "ray_join_to_first_task_seconds_all": joins,
    }
    print(json.dumps(out, indent=2))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
