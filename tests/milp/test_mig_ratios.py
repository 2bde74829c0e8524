"""The paper's guarantees as checks against the exact optimum (FAR paper, Sec. 5 and 6.4).

* lower bound <= OPT(no reconf) <= OPT(reconf) <= FAR (same reconfiguration times);
* FAR's schedules are feasible for the exact model: its assignment, fixed in
  the model, admits a schedule no longer than FAR's (and OPT <= FAR);
* FAR with zero reconfiguration times is within the approximation factor of
  OPT(no reconf): 7/4 on the A30, 2 on the A100/H100 (Sec. 5.1, 5.2);
* multi-batch: FAR's online concatenation is within 2 * rho of the offline
  optimum with release times (Sec. 5 after Shmoys, Wein and Williamson), in
  the setting where that result is proven: every later batch is released
  while the previous batch's FAR schedule is still running (release of batch
  b+1 strictly inside (release of b, end of FAR's schedule of batches <= b)),
  reconfiguration times zero, one GPU.

Instances are small enough to solve exactly (n <= 6 per batch) in a few seconds.
A violation here is a bug or a counterexample to the paper, never a reason to loosen a check.
"""

from __future__ import annotations

from functools import lru_cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bounds import mig as mig_bounds
from heuristics import far
from instances import mig
from milp import Status
from milp import mig as milp_mig

PRESETS = ["PoorScaling", "MixedScaling", "GoodScaling"]
CASES = [("A30", p, 6) for p in PRESETS] + [("A100", p, 5) for p in PRESETS] + [("H100", "MixedScaling", 4)]
TOL = 1e-6


@lru_cache(maxsize=None)
def _instance(gpu: str, preset: str, n: int, seed: int = 0):
    p = mig.generate(n=n, gpu=gpu, workload=preset, seed=seed)
    off = milp_mig.solve(p, backend="cpsat", reconfiguration=False, time_limit=30, workers=2, hint=False)
    on = milp_mig.solve(p, backend="cpsat", reconfiguration=True, time_limit=30, workers=2, hint=False)
    assert off.status is Status.OPTIMAL and on.status is Status.OPTIMAL
    return p, off, on


@pytest.mark.parametrize("gpu,preset,n", CASES)
def test_bound_chain_lb_opt0_opt1_far(gpu, preset, n):
    p, off, on = _instance(gpu, preset, n)
    far_sched = far.schedule(p)
    assert mig.check(p, far_sched) == []
    assert mig_bounds.area_bound(p) <= mig_bounds.lower_bound(p.without_reconfiguration()) + TOL
    assert mig_bounds.lower_bound(p.without_reconfiguration()) <= off.objective + TOL
    # OPT(no reconf) <= OPT(reconf): compare proven bound against the other's objective
    assert off.lower_bound <= on.objective + TOL
    assert mig_bounds.lower_bound(p) <= on.objective + TOL
    assert on.lower_bound <= far_sched.makespan + TOL


@pytest.mark.parametrize("gpu,preset,n", CASES)
def test_far_assignment_is_feasible_for_the_exact_model(gpu, preset, n):
    p, _off, on = _instance(gpu, preset, n)
    far_sched = far.schedule(p)
    fixed = milp_mig.solve(p, backend="cpsat", reconfiguration=True, time_limit=30, workers=2, hint=far_sched,
                           fix_assignment=True)
    assert fixed.status is Status.OPTIMAL
    assert mig.check(p, fixed.schedule) == []
    assert {t.task: t.placement for t in fixed.schedule.tasks} == {t.task: t.placement for t in far_sched.tasks}
    # the model fits FAR's assignment at least as well as FAR (up to the 1 ms rounding)
    assert fixed.lower_bound <= far_sched.makespan + TOL
    assert on.lower_bound <= fixed.objective + TOL


@pytest.mark.parametrize("gpu,preset,n", CASES)
def test_far_without_reconfiguration_within_approximation_factor(gpu, preset, n):
    p, off, _on = _instance(gpu, preset, n)
    q = p.without_reconfiguration()
    far0 = far.schedule(q)
    assert mig.check(q, far0) == []
    rho = mig_bounds.approximation_factor(gpu)
    assert off.lower_bound <= far0.makespan + TOL
    assert far0.makespan <= rho * off.objective + TOL


def _online_workload(gpu: str, preset: str, sizes, fractions, seed: int):
    """Batches released while the previous one runs: release of batch b+1 =
    release of b + fraction * (end of FAR's schedule of batches 0..b - release of b)."""
    batches = mig.generate_workload(sizes, [0.0] * len(sizes), gpu=gpu, workload=preset, seed=seed).batches
    released = [mig.Problem(batches[0].gpu.without_reconfiguration(), batches[0].tasks, 0.0)]
    for b, frac in zip(batches[1:], fractions):
        so_far = mig.Workload(released[0].gpu, released)
        end = far.schedule(so_far).makespan
        r = released[-1].release + frac * (end - released[-1].release)
        released.append(mig.Problem(released[0].gpu, b.tasks, r))
    return mig.Workload(released[0].gpu, released)


@pytest.mark.parametrize("gpu,preset,fractions", [
    ("A30", "MixedScaling", (0.5,)), ("A30", "PoorScaling", (0.2, 0.8)),
    ("A100", "MixedScaling", (0.6,)), ("A100", "GoodScaling", (0.3,)),
])
def test_multibatch_far_within_competitive_ratio(gpu, preset, fractions):
    sizes = [3] * (len(fractions) + 1)
    w = _online_workload(gpu, preset, sizes, fractions, seed=3)
    rel = [b.release for b in w.batches]
    assert all(a < b for a, b in zip(rel, rel[1:]))
    online = far.schedule(w)
    assert mig.check(w, online) == []
    opt = milp_mig.solve(w, backend="cpsat", reconfiguration=False, time_limit=60, workers=2, hint=False)
    assert opt.status is Status.OPTIMAL
    assert mig.check(w, opt.schedule) == []
    assert opt.lower_bound <= online.makespan + TOL
    assert online.makespan <= mig_bounds.competitive_ratio(gpu) * opt.objective + TOL


_t = st.floats(min_value=0.5, max_value=50.0)


@st.composite
def a30_batches(draw):
    n = draw(st.integers(2, 5))
    tasks = []
    for i in range(n):
        raw = sorted([draw(_t), draw(_t), draw(_t)], reverse=True)
        tasks.append(mig.Task(f"t{i}", {1: raw[0], 2: raw[1], 4: raw[2]}))
    return mig.Problem("A30", tasks)


@settings(max_examples=4, deadline=None)
@given(a30_batches())
def test_random_a30_far_ratios(p):
    """Hypothesis: OPT(reconf) <= FAR and FAR(0 reconf) <= 7/4 OPT(no reconf) on arbitrary
    monotone A30 batches (including super-linear speed-ups)."""
    off = milp_mig.solve(p, backend="cpsat", reconfiguration=False, time_limit=20, workers=1, hint=False)
    on = milp_mig.solve(p, backend="cpsat", reconfiguration=True, time_limit=20, workers=1, hint=False)
    assert off.proven and on.proven
    assert on.lower_bound <= far.schedule(p).makespan + TOL
    far0 = far.schedule(p.without_reconfiguration()).makespan
    assert far0 <= 1.75 * off.objective + TOL


@pytest.mark.slow
@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("n", [7, 8])
@pytest.mark.parametrize("seed", range(3))
def test_sweep_a100_ratios(preset, n, seed):
    p = mig.generate(n=n, gpu="A100", workload=preset, seed=seed)
    off = milp_mig.solve(p, backend="cpsat", reconfiguration=False, time_limit=60)
    on = milp_mig.solve(p, backend="cpsat", reconfiguration=True, time_limit=120)
    assert off.proven
    far_sched = far.schedule(p)
    assert off.lower_bound <= on.objective + TOL
    assert on.lower_bound <= far_sched.makespan + TOL
    assert far.schedule(p.without_reconfiguration()).makespan <= 2 * off.objective + TOL
