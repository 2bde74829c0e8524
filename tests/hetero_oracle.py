"""Single-machine weighted-tardiness oracle shared by the bound and exact-method tests.

Loaded by file path by ``tests/bounds/test_hetero.py`` and
``tests/milp/test_hetero_ssdp.py`` (the suite runs with
``--import-mode=importlib``, as ``tests/heuristics/far_pinned_cases.py`` is
loaded): an enumeration over every order, independent of the code under test.
"""

import itertools
import math

from instances.hetero import GPU, HeteroProblem, Task


def brute(p, w, d, start=0.0):
    """Least total weighted tardiness of jobs (p, w, d) run back to back from ``start``, by enumeration."""
    best = math.inf
    for perm in itertools.permutations(range(len(p))):
        t, c = start, 0.0
        for j in perm:
            t += p[j]
            c += w[j] * max(0.0, t - d[j])
        best = min(best, c)
    return best


def single(p, w, d, arrival=0.0, speed=1.0):
    """The jobs as a one-GPU problem with a common arrival."""
    tasks = tuple(Task(f"j{i}", float(p[i]), 0.0, float(d[i]), float(w[i]), arrival) for i in range(len(p)))
    return HeteroProblem(tasks, (GPU("m", speed),))
