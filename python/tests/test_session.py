"""A session's life: init, shutdown, init again, and refs that outlive their session."""

import numpy as np
import pytest

import swarm


def test_calls_before_init_raise_swarm_error_saying_to_init():
    assert not swarm.is_initialized()
    with pytest.raises(swarm.SwarmError, match="not initialized"):
        swarm.put(1)


def test_a_ref_outlives_its_session_and_fails_clearly_once_it_is_shut_down(code_library):
    swarm.init(libraries=[code_library], num_cpus=2)
    with pytest.raises(swarm.SwarmError, match="called already"):
        swarm.init(libraries=[code_library])
    old = swarm.put(np.arange(1 << 18, dtype=np.float32))
    view = swarm.get(old)
    swarm.shutdown()
    assert not swarm.is_initialized()
    with pytest.raises(swarm.SwarmError, match="shut down") as e:
        old.get()
    assert e.value.code == "runtime_stopped"
    assert view[-1] == (1 << 18) - 1  # an array already read keeps its value
    swarm.init(libraries=[code_library], num_cpus=2)
    try:
        with pytest.raises(ValueError, match="made by a session that was shut down"):
            swarm.get(old)
        with pytest.raises(ValueError, match="made by a session that was shut down"):
            swarm.function("add").remote(old, 1)
        assert swarm.get(swarm.function("add").remote(1, 2)) == 3
    finally:
        swarm.shutdown()


def test_init_names_a_library_that_cannot_be_loaded_and_an_unreachable_head(tmp_path):
    with pytest.raises(ValueError, match="cannot load user code '/no/such/lib.so'"):
        swarm.init(libraries=["/no/such/lib.so"])
    with pytest.raises(swarm.SwarmError, match="127.0.0.1:1"):
        swarm.init("127.0.0.1:1", secret="x", timeout=1)
    with pytest.raises(ValueError, match="not-an-address"):
        swarm.init("not-an-address", secret="x", timeout=1)
    assert not swarm.is_initialized()
