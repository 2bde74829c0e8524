"""FAR's fast scan of the allocation family against the plain simulation it replaces.

The run-length simulation (``far_phase2.runs_makespan``), the phase-2 bound
(``far_phase2.Bound``) and the batched float additions (``far_phase2._advance``)
must not change a single makespan (``test_far_pinned.py`` checks the pinned
table); here each is checked against
the task-by-task simulation on tie-heavy and generated instances.
"""

from __future__ import annotations

import importlib.util
import math
import random
import time
from collections import deque
from itertools import accumulate, repeat
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from heuristics import far, far_batch, far_phase2
from instances import gpus, mig

_spec = importlib.util.spec_from_file_location("far_pinned_cases", Path(__file__).with_name("far_pinned_cases.py"))
cases_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases_mod)


def _runs(groups, top):
    rt = [[] for _ in range(top)]
    rc = [[] for _ in range(top)]
    for s, q in groups.items():
        for negt, _ in q:
            if rt[s] and rt[s][-1] == -negt:
                rc[s][-1] += 1
            else:
                rt[s].append(-negt)
                rc[s].append(1)
    return rt, rc


def _tie_heavy(n, gpu, seed, step):
    # durations on a coarse grid (many equal times) plus fractional create/destroy times
    rnd = random.Random(seed)
    g = gpus.get(gpu)
    tasks = []
    for i in range(n):
        t = step * rnd.randint(4, 40)
        times = {}
        for s in g.sizes:
            times[s] = t
            t = max(step, step * round(t / step * rnd.choice([0.5, 0.55, 0.7, 1.0])))
        tasks.append(mig.Task(f"t{i}", times))
    return mig.Problem(g, tasks)


@settings(max_examples=60, deadline=None)
@given(gpu=st.sampled_from(["A30", "A100", "H100"]), n=st.integers(1, 400), seed=st.integers(0, 10_000),
       step=st.sampled_from([1.0, 0.5, 0.1, 0.37]), reconf=st.booleans(), data=st.data())
def test_run_length_simulation_equals_task_by_task(gpu, n, seed, step, reconf, data):
    p = _tie_heavy(n, gpu, seed, step)
    if not reconf:
        p = p.without_reconfiguration()
    d = far_batch._Data(p)
    top = max(d.tree.size) + 1
    allocs = [list(a) for a in far_batch._allocations(d)][:25]
    allocs.append([data.draw(st.sampled_from(sorted(tt))) for tt in d.times])
    for alloc in allocs:
        groups = far_batch._groups(d, alloc)
        slow = far_phase2.simulate(d.tree, groups, d.n)[0]
        rt, rc = _runs(groups, top)
        assert far_phase2.runs_makespan(d.tree, rt, rc, d.n) == slow
        # the early abort answers None exactly when the makespan reaches the cap
        assert far_phase2.runs_makespan(d.tree, rt, rc, d.n, slow) is None
        assert far_phase2.runs_makespan(d.tree, rt, rc, d.n, math.nextafter(slow, math.inf)) == slow


@settings(max_examples=60, deadline=None)
@given(gpu=st.sampled_from(["A30", "A100", "H100"]), n=st.integers(1, 300), seed=st.integers(0, 10_000),
       preset=st.sampled_from(cases_mod.PRESETS), reconf=st.booleans(), data=st.data())
def test_phase2_bound_never_exceeds_phase2(gpu, n, seed, preset, reconf, data):
    p = mig.generate(n, gpu, preset[0], preset[1], seed=seed)
    if not reconf:
        p = p.without_reconfiguration()
    d = far_batch._Data(p)
    bound = far_phase2.Bound(d.tree)
    allocs = [list(a) for a in far_batch._allocations(d)][::7]
    allocs.append([data.draw(st.sampled_from(sorted(tt))) for tt in d.times])
    for alloc in allocs:
        groups = far_batch._groups(d, alloc)
        work = {s: math.fsum(-x for x, _ in q) for s, q in groups.items()}
        count = {s: len(q) for s, q in groups.items()}
        longest = {s: -q[0][0] for s, q in groups.items() if q}
        for ties in ("ours", "reference"):
            # the bound is exact in real arithmetic; its float rounding is why
            # the scan prunes with it only after the same 1e-9 relative margin
            assert bound(work, count, longest) * (1 - 1e-9) <= far_phase2.simulate(d.tree, groups, d.n, ties=ties)[0]


@settings(max_examples=300)
@given(x=st.one_of(st.just(0.0), st.floats(0, 1e7), st.sampled_from([5e-320, 0.33, 3678.89])),
       t=st.one_of(st.sampled_from([6.0, 4.5, 0.5, 0.1, 2.0 ** -30, 10.0]), st.floats(1e-6, 100)),
       q=st.integers(0, 5000))
def test_advance_is_one_addition_per_step(x, t, q):
    assert far_phase2._advance(x, t, q) == deque(accumulate(repeat(t, q), initial=x), maxlen=1)[0]


def test_pruning_and_fast_scan_change_nothing():
    for seed in range(12):
        p = mig.generate(20 + 30 * seed, ["A30", "A100", "H100"][seed % 3], seed=seed)
        a, b = far.plan(p, refine=False), far.plan(p, refine=False, prune=False)
        assert a.phase2_makespan == b.phase2_makespan and a.allocation == b.allocation


def test_near_identical_tasks_scan_the_family_quickly():
    # the quadratic case: 10,000 near-identical tasks took 9.4 s before the
    # run-length simulation; 2,000 must now take well under a second of CPU
    p = cases_mod.near_identical(2000)
    t0 = time.process_time()
    r = far.plan(p)
    assert r.stats["allocations"] > 250 and mig.check(p, r.schedule) == []
    assert time.process_time() - t0 < 2.0
