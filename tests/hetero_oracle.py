"""Single-machine weighted-tardiness oracle shared by the bound and exact-method tests.

Loaded by file path by ``tests/bounds/test_hetero.py`` and
``tests/milp/test_hetero_ssdp*.py`` (the suite runs with
``--import-mode=importlib``, as ``tests/heuristics/far_pinned_cases.py`` is
loaded): an enumeration over every order and a dynamic program over job
subsets, independent of the code under test.
"""

import itertools
import math

from instances.hetero import GPU, HeteroProblem, Task


def small_jobs(min_n=1, max_p=9, min_w=0, max_w=6, max_d=40):
    """A hypothesis strategy: lists ``(p, w, d)`` of ``min_n``-7 jobs with integer times, weights and due dates."""
    from hypothesis import strategies as st

    return st.integers(min_n, 7).flatmap(lambda n: st.tuples(
        st.lists(st.integers(1, max_p), min_size=n, max_size=n),
        st.lists(st.integers(min_w, max_w), min_size=n, max_size=n),
        st.lists(st.integers(0, max_d), min_size=n, max_size=n)))


def brute(p, w, d, start=0.0):
    """Least total weighted tardiness of jobs (p, w, d) run back to back from ``start``, by enumeration
    (by :func:`by_subsets` beyond 7 jobs, where enumeration takes seconds)."""
    if len(p) > 7:
        return by_subsets(p, w, d, start)
    best = math.inf
    for perm in itertools.permutations(range(len(p))):
        t, c = start, 0.0
        for j in perm:
            t += p[j]
            c += w[j] * max(0.0, t - d[j])
        best = min(best, c)
    return best


def first_optimal(p, w, d, rank):
    """The optimal sequence that comes first in ``rank`` order (position by position), by enumeration:
    ``(sequence, completion times, cost)``."""
    p, w, d, rank = ([x.item() if hasattr(x, "item") else x for x in v] for v in (p, w, d, rank))  # plain numbers
    best = None
    for perm in itertools.permutations(range(len(p))):
        C = list(itertools.accumulate(p[j] for j in perm))
        cost = int(sum(w[j] * max(0, c - d[j]) for j, c in zip(perm, C)))
        if best is not None and cost > best[0][0]:
            continue
        key = (cost, [rank[j] for j in perm])
        if best is None or key < best[0]:
            best = (key, perm, C)
    return best[1], best[2], best[0][0]


def assert_grid_keeps(grid, prec, seq, C):
    """Restrict ``grid`` (a :class:`bounds.hetero_dp.Grid`) to the pairs ``prec``, apply its three-job rule,
    and assert that it keeps the sequence ``seq`` with completions ``C`` arc by arc."""
    import numpy as np

    grid.restrict(prec)
    grid.dominate3(rounds=3)
    for k, (j, t) in enumerate(zip(seq, C)):
        assert grid.alive[t, j]
        if k:
            i = seq[k - 1]
            assert grid.mask[t, j, i >> 6] >> np.uint64(i & 63) & np.uint64(1)


def assert_pairs_keep(grid, prec, seq, C, opt):
    """The first optimal schedule ``seq`` (completions ``C``, cost ``opt``) keeps every pair of ``prec``,
    ``grid`` restricted to them keeps it arc by arc, and with every job a modifier, pruned by the pairs,
    the relaxation is the problem itself."""
    import numpy as np

    from milp.hetero_modifiers import ModifierSearch

    pos = {j: k for k, j in enumerate(seq)}
    assert all(pos[i] < pos[j] for i, j in zip(*np.nonzero(prec)))
    assert_grid_keeps(grid, prec, seq, C)
    search = ModifierSearch(grid, np.zeros(len(seq)), opt + 0.5, prec=prec)
    search.add(range(len(seq)))
    assert search.forward().value == opt


def by_subsets(p, w, d, start=0.0):
    """Least total weighted tardiness of jobs run back to back from ``start``, by dynamic programming over
    job subsets (up to about 20 jobs)."""
    n = len(p)
    best = [0.0] + [math.inf] * ((1 << n) - 1)
    total = [0] * (1 << n)
    for m in range(1, 1 << n):
        low = (m & -m).bit_length() - 1
        total[m] = total[m ^ (1 << low)] + p[low]
        best[m] = min(best[m ^ (1 << j)] + w[j] * max(0, start + total[m] - d[j]) for j in range(n) if m >> j & 1)
    return best[-1]


def single(p, w, d, arrival=0.0, speed=1.0):
    """The jobs as a one-GPU problem with a common arrival."""
    tasks = tuple(Task(f"j{i}", float(p[i]), 0.0, float(d[i]), float(w[i]), arrival) for i in range(len(p)))
    return HeteroProblem(tasks, (GPU("m", speed),))
