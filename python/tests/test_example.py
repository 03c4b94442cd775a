"""The example script of examples/python runs to completion."""

import os
import subprocess
import sys


def test_the_numpy_pipeline_example_runs_and_prints_its_results(code_library):
    script = os.path.join(os.environ["SWARM_EXAMPLES"], "numpy_pipeline.py")
    env = {k: v for k, v in os.environ.items() if k not in ("SWARM_ADDRESS", "SWARM_SECRET")}
    out = subprocess.run([sys.executable, script, code_library], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "sum of 1000 tasks: 500500" in out.stdout
    assert "counter: 150" in out.stdout
    assert "task failed as expected" in out.stdout and "timed out as expected" in out.stdout
