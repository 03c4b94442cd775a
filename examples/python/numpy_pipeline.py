"""A notebook-style tour of Swarm from Python: an embedded node running the C++ tasks
and actors of a library of user code, NumPy arrays in and out.

    python examples/python/numpy_pipeline.py path/to/libcode.so

With SWARM_ADDRESS and SWARM_SECRET set (as `swarm job submit` sets them) it runs
against that cluster instead.
"""

import sys
import time

import numpy as np

import swarm

library = sys.argv[1]
swarm.init(libraries=[library])
print("connected as", swarm.node_name(), "- functions:", ", ".join(sorted(swarm.functions())))

# Tasks: call a registered C++ function by name; .remote returns a future at once.
add = swarm.function("add")
futures = [add.remote(i, 1) for i in range(1000)]
print("sum of 1000 tasks:", sum(swarm.get(futures)))

# NumPy arrays become std::vector<float> and come back as arrays viewing the store.
signal = np.sin(np.linspace(0, 8 * np.pi, 1 << 20, dtype=np.float32))
scaled = swarm.get(swarm.function("scale").remote(signal, 0.5))
print("scaled", scaled.dtype, scaled.shape, "max", float(scaled.max()))

# Refs chain work without bringing values back here.
stored = swarm.put(signal)
total = swarm.function("sum_doubles").remote(swarm.put(signal.astype(np.float64)))
print("sum of the signal:", round(swarm.get(total), 3), "from ref", stored.id)

# An actor keeps state between calls.
counter = swarm.actor_type("counter").remote(100)
for _ in range(10):
    counter.add.remote(5)
print("counter:", swarm.get(counter.value.remote()))

# Errors are Python exceptions carrying Swarm's message.
try:
    swarm.get(swarm.function("fail").remote("a bad row"))
except swarm.TaskError as e:
    print("task failed as expected:", e)
try:
    swarm.get(swarm.function("sleep_ms").remote(2000), timeout=0.05)
except swarm.GetTimeoutError:
    print("timed out as expected")

start = time.perf_counter()
swarm.get([add.remote(i, i) for i in range(2000)])
print(f"2000 tasks in {time.perf_counter() - start:.3f} s")
swarm.shutdown()
