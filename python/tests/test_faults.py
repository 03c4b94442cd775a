"""Faults met as a client connects: its own cluster (the module's), its first task."""

import os
import time

import swarm


def test_a_task_whose_node_dies_as_it_arrives_runs_again(cluster, tmp_path, capfd):
    # Submitted the moment the client connected: its connections to the workers may
    # still be in their handshake when the node it was placed on dies, and only the
    # head's table tells the client of that death.
    die_once = swarm.function("die_once").options(resources={"worker": 1}, max_retries=3)
    ref = die_once.remote(os.fspath(tmp_path / "marker"))
    assert swarm.get(ref, timeout=60) == 42, cluster.logs()
    # Its connections close as it exits, before the process can be waited for: the
    # answer of the rerun may come first.
    deadline = time.monotonic() + 10
    while not cluster.dead() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(cluster.dead()) == 1
    err = capfd.readouterr().err
    assert "running 'die_once' again" in err, err
