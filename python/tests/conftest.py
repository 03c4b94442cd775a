"""Fixtures of the Python driver's tests: the user code library, a real cluster of
`swarm start` node processes on 127.0.0.1, an embedded node."""

import os

import pytest

import swarm
from swarm.cluster_utils import Cluster


def _required(name):
    value = os.environ.get(name)
    if not value:
        pytest.skip(f"{name} is not set: run the tests through ctest")
    return value


@pytest.fixture(scope="session")
def code_library():
    """The library of user code (python/tests/test_code.cpp)."""
    return _required("SWARM_PY_TEST_CODE")


@pytest.fixture(scope="module")
def cluster(code_library):
    """A head and two workers offering the resource `worker`, and this process connected
    to them as a client."""
    c = Cluster(_required("SWARM_CLI"), libraries=[code_library])
    try:
        c.connect(swarm, libraries=[code_library])
        yield c
    finally:
        swarm.shutdown()
        c.stop()


@pytest.fixture(scope="module")
def embedded(code_library):
    """An embedded node in this process, with the test library loaded."""
    swarm.init(libraries=[code_library], num_cpus=4)
    yield
    swarm.shutdown()
