"""The Python driver as a client of a real three-node cluster of `swarm start` processes."""

import time

import numpy as np
import pytest

import swarm

pytestmark = pytest.mark.usefixtures("cluster")

WORKERS = {"worker-1", "worker-2"}


def data_pointer(a):
    return a.__array_interface__["data"][0]


def test_a_fan_out_of_ten_thousand_tasks_returns_every_result():
    add = swarm.function("add")
    refs = [add.remote(i, i) for i in range(10_000)]
    assert swarm.get(refs, timeout=120) == [2 * i for i in range(10_000)]


def test_tasks_asking_for_a_workers_resource_run_on_the_workers():
    where = swarm.function("where").options(resources={"worker": 1})
    nodes = set(swarm.get([where.remote() for _ in range(50)], timeout=60))
    assert nodes and nodes <= WORKERS


def test_an_actor_lives_on_a_worker_and_keeps_its_state_between_calls():
    counter = swarm.actor_type("counter").options(resources={"worker": 1}).remote(10)
    assert swarm.get(counter.home.remote(), timeout=30) in WORKERS
    for i in range(1, 101):
        counter.add.remote(1)
    assert swarm.get(counter.value.remote(), timeout=30) == 110


def test_a_numpy_array_goes_to_a_worker_and_back_and_is_read_without_a_copy():
    xs = np.arange(1 << 20, dtype=np.float32)  # 4 MiB: sent in bulk
    ref = swarm.function("scale").options(resources={"worker": 1}).remote(xs, 2.0)
    first, second = swarm.get(ref, timeout=60), swarm.get(ref, timeout=60)
    np.testing.assert_array_equal(first, xs * 2)
    assert data_pointer(first) == data_pointer(second)
    big = swarm.function("ramp").options(resources={"worker": 1}).remote(1 << 22)
    out = swarm.get(big, timeout=60)
    assert out.shape == (1 << 22,) and out[-1] == (1 << 22) - 1


def test_a_put_object_is_read_by_a_task_on_a_worker():
    ref = swarm.put(np.linspace(0, 1, 300_000))
    total = swarm.function("sum_doubles").options(resources={"worker": 1}).remote(ref)
    assert swarm.get(total, timeout=60) == pytest.approx(150_000.0)


def test_a_stream_written_on_a_worker_is_read_here_item_by_item():
    stream = swarm.function("squares").options(resources={"worker": 1}, stream_window=4) \
        .remote(50, 1000)
    assert [swarm.get(r, timeout=30) for r in stream] == [i * i for i in range(50)]
    counter = swarm.actor_type("counter").options(resources={"worker": 1}).remote(0)
    assert [swarm.get(r, timeout=30) for r in counter.count_up.remote(5)] == [1, 2, 3, 4, 5]


def test_a_task_that_throws_on_a_worker_raises_task_error_naming_the_node():
    bad = swarm.function("fail").options(resources={"worker": 1}).remote("bad input")
    with pytest.raises(swarm.TaskError, match="bad input") as e:
        swarm.get(bad, timeout=30)
    assert "worker-" in str(e.value)


def test_a_type_mismatch_and_a_timeout_against_the_cluster():
    with pytest.raises(TypeError, match="function 'greet' argument 1"):
        swarm.function("greet").remote(3)
    slow = swarm.function("sleep_ms").options(resources={"worker": 1}).remote(5000)
    with pytest.raises(swarm.GetTimeoutError):
        swarm.get(slow, timeout=0.1)


def test_init_without_an_address_connects_where_swarm_job_points_it(cluster, code_library,
                                                                 monkeypatch):
    # `swarm job submit` runs a driver with SWARM_ADDRESS and SWARM_SECRET set.
    swarm.shutdown()
    monkeypatch.setenv("SWARM_ADDRESS", cluster.address)
    monkeypatch.setenv("SWARM_SECRET", cluster.secret)
    monkeypatch.setenv("SWARM_LIBRARIES", code_library)
    try:
        swarm.init()
        assert swarm.node_name().startswith("client-")
        where = swarm.function("where").options(resources={"worker": 1})
        assert swarm.get(where.remote(), timeout=30) in WORKERS
    finally:
        swarm.shutdown()
        monkeypatch.undo()
        cluster.connect(swarm, libraries=[code_library])


def test_the_tasks_of_a_killed_worker_are_retried_on_another(cluster, capfd):
    # Runs last: it kills a worker while tasks run on both workers (each has 2 CPUs).
    slow = swarm.function("slow_where").options(resources={"worker": 1}, max_retries=3)
    refs = [slow.remote(2000) for _ in range(8)]
    time.sleep(0.5)
    cluster.kill("worker-2")
    assert swarm.get(refs, timeout=60) == ["worker-1"] * 8, cluster.logs()
    assert cluster.dead() == ["worker-2"]
    # This client, their owner, ran those of worker-2 again (and says so).
    err = capfd.readouterr().err
    assert "running 'slow_where' again" in err and "node 'worker-2' was lost" in err, err
