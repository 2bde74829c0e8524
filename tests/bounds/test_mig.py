"""Lower bounds, approximation factors and competitive ratios of the MIG family (FAR paper, Sec. 5, 6.4)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bounds import mig as mig_bounds
from instances import mig
from instances.errors import InstanceError


def _serial(problem, reconf):
    """A trivially feasible schedule: every task alone on the whole GPU, one after another."""
    gpu = problem.gpu
    root = gpu.root
    rel = problem.releases()
    clock, tasks = 0.0, []
    tc = gpu.create_time[root.size] if reconf else 0.0
    ops = []
    if reconf:
        ops.append(mig.Reconfiguration("create", root, 0.0, tc))
        clock = tc
    for t in sorted(problem.tasks, key=lambda t: rel[t.name]):
        start = max(clock, rel[t.name])
        tasks.append(mig.ScheduledTask(t.name, root, start, start + t.times[root.size]))
        clock = start + t.times[root.size]
    return mig.Schedule(gpu.name, tasks, ops)


def test_area_bound_is_the_papers_baseline():
    p = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.5, 4: 1.5}), mig.Task("b", {1: 8.0, 2: 3.0, 4: 2.0})])
    # min areas 4 and 6 over 4 slices
    assert mig_bounds.area_bound(p) == pytest.approx(10 / 4)


def test_lower_bound_dominates_area_and_longest_task():
    for seed in range(5):
        p = mig.generate(n=10, gpu="A100", seed=seed)
        rep = mig_bounds.bound_report(p)
        assert rep["lower_bound"] >= rep["area"] and rep["lower_bound"] >= rep["longest"]
        assert rep["moldable_area"] >= rep["area"] - 1e-9
        assert mig_bounds.lower_bound(p) >= mig_bounds.lower_bound(p.without_reconfiguration())


def test_slice_chain_bound_catches_tasks_that_cannot_share():
    """Two tasks that only make sense on the whole A30 (1 and 2 slices far too slow):
    the area bound says 5, but within 10 s both must run on 4@0, one after the other."""
    t = {1: 100.0, 2: 100.0, 4: 5.0}
    p = mig.Problem("A30", [mig.Task("a", t), mig.Task("b", t)]).without_reconfiguration()
    assert mig_bounds.area_bound(p) == pytest.approx(2 * 20 / 4)
    assert mig_bounds.bound_report(p)["slice_chain"] == pytest.approx(10.0)
    assert mig_bounds.lower_bound(p) == pytest.approx(10.0)


def test_create_time_counts_with_reconfiguration():
    p = mig.Problem("A100", [mig.Task("a", {1: 7.0, 2: 3.5, 3: 2.4, 4: 1.8, 7: 1.0})])
    assert mig_bounds.lower_bound(p) == pytest.approx(0.24 + 1.0)
    assert mig_bounds.lower_bound(p.without_reconfiguration()) == pytest.approx(1.0)


def test_workload_bound_respects_releases():
    w = mig.generate_workload([2, 2], [0.0, 500.0], gpu="A30", seed=1)
    late = min(t.times[max(t.times)] for t in w.batches[1].tasks)
    assert mig_bounds.lower_bound(w) >= 500.0 + late - 1e-9


@pytest.mark.parametrize("gpu,g,want", [("A30", 1, 7 / 4), ("A30", 2, 15 / 8), ("A30", 5, 39 / 20),
                                        ("A100", 1, 2.0), ("H100", 1, 2.0)])
def test_approximation_factors(gpu, g, want):
    assert mig_bounds.approximation_factor(gpu, gpus=g) == pytest.approx(want)
    assert mig_bounds.competitive_ratio(gpu, gpus=g) == pytest.approx(2 * want)
    assert mig_bounds.approximation_factor(gpu, gpus=g) <= 2.0


def test_factor_errors():
    with pytest.raises(InstanceError):
        mig_bounds.approximation_factor("A100", gpus=2)
    with pytest.raises(InstanceError):
        mig_bounds.approximation_factor("A30", gpus=0)
    with pytest.raises(InstanceError):
        mig_bounds.approximation_factor("B200")


_t = st.floats(min_value=0.1, max_value=100.0)


@st.composite
def problems(draw):
    gpu = draw(st.sampled_from(["A30", "A100"]))
    sizes = (1, 2, 4) if gpu == "A30" else (1, 2, 3, 4, 7)
    n = draw(st.integers(1, 8))
    tasks = []
    for i in range(n):
        raw = sorted((draw(_t) for _ in sizes), reverse=True)
        tasks.append(mig.Task(f"t{i}", dict(zip(sizes, raw))))
    return mig.Problem(gpu, tasks)


@settings(max_examples=40, deadline=None)
@given(problems(), st.booleans())
def test_lower_bound_below_a_feasible_schedule(p, reconf):
    """Every bound stays below the makespan of a checked feasible schedule."""
    target = p if reconf else p.without_reconfiguration()
    sched = _serial(target, reconf)
    assert mig.check(target, sched) == []
    assert mig_bounds.area_bound(target) <= mig_bounds.lower_bound(target) + 1e-9
    assert mig_bounds.lower_bound(target) <= sched.makespan + 1e-9
