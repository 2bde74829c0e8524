"""Tests of the HiGHS assignment relaxation of the MIG model (milp/mig_pyomo_assignment.py).

The relaxation is written twice, as a CP-SAT model (``milp.mig_cpsat``) and as
a Pyomo MILP; that their proven optima agree and never exceed the optimum is
tested by hypothesis in ``tests/milp/test_mig_cpsat.py``. Here: every start
loaded by ``set_assignment`` is a feasible point of the MILP.
"""

from __future__ import annotations

import pyomo.environ as pe
import pytest

from instances import mig
from instances.mig_retime import canonical
from milp.mig_pyomo_assignment import build_assignment_model, read_assignment, set_assignment


def _violations(m: pe.ConcreteModel, tol: float = 1e-7) -> list[str]:
    bad = []
    for con in m.component_data_objects(pe.Constraint, active=True):
        body = pe.value(con.body)
        if con.has_lb() and body < pe.value(con.lower) - tol:
            bad.append(con.name)
        if con.has_ub() and body > pe.value(con.upper) + tol:
            bad.append(con.name)
    for v in m.component_data_objects(pe.Var):
        if v.value is None or (v.lb is not None and v.value < v.lb - tol) or (v.ub is not None and v.value > v.ub + tol):
            bad.append(v.name)
    return bad


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("converge", [False, True])
def test_set_assignment_loads_a_feasible_point(seed, converge):
    p = mig.generate(n=8, gpu="A100", seed=seed)
    g = p.gpu
    for choice in range(3):
        assignment = {}
        for k, t in enumerate(p.tasks):
            ps = [q for q in g.placements if q.size in t.times]
            assignment[t.name] = ps[(k * 5 + choice * 3 + seed) % len(ps)]
        m = build_assignment_model(p, horizon=1e6, converge=converge)
        assert set_assignment(m, assignment)
        assert _violations(m) == []
        got = read_assignment(m)  # the same up to the GPU's symmetries
        mapped = canonical(p, mig.Schedule(g.name, [mig.ScheduledTask(t.name, assignment[t.name], 0.0, 1.0)
                                                   for t in p.tasks]))
        assert got == {st.task: st.placement for st in mapped.tasks}


def test_set_assignment_refuses_a_start_above_the_horizon():
    p = mig.generate(n=4, gpu="A30", seed=1)
    leaf = p.gpu.placement(1, 0)
    m = build_assignment_model(p, horizon=1e-3)
    assert not set_assignment(m, {t.name: leaf for t in p.tasks})


def test_not_for_workloads_or_static_gpus():
    p = mig.generate(n=3, gpu="A30", seed=1)
    with pytest.raises(ValueError):
        build_assignment_model(p.without_reconfiguration(), horizon=100.0)


CONVERGENCE_CASES = [
    (("MixedScaling", "WideTimes"), 1401, 72.0088, 72.0288),   # a 7g session after children on both halves
    (("PoorScaling", "NarrowTimes"), 1400, 166.7212, 166.7312),  # a 3g session after three 1g ones
]


def _convergence_instance(family, seed, optimum):
    from milp import Status, solve_optimal

    p = mig.generate(n=12, gpu="A100", workload=family[0], times=family[1], seed=seed, p_sup=0.5)
    exact = solve_optimal(p, backend="cpsat", time_limit=120, workers=2)
    assert exact.status is Status.OPTIMAL and mig.check(p, exact.schedule) == []
    assert exact.objective == pytest.approx(optimum, abs=1e-4)
    return p, exact.objective


@pytest.mark.parametrize("family, seed, without, optimum",
                         [CONVERGENCE_CASES[0], pytest.param(*CONVERGENCE_CASES[1], marks=pytest.mark.slow)])
def test_convergence_rows_make_the_relaxation_meet_the_optimum(family, seed, without, optimum):
    # A100 n = 12, p_sup 0.5: a session that stays to the end waits for the destroys before it on its
    # slices, one at a time on the channel; without these rows both relaxations stop 0.01-0.02 s below
    # the optimum (and HiGHS, with no Benders loop, left both instances open after 60 s)
    from milp.mig_cpsat import relaxation_bound

    p, _ = _convergence_instance(family, seed, optimum)
    assert relaxation_bound(p, time_limit=60, workers=2) == pytest.approx(without, abs=1e-4)
    assert relaxation_bound(p, time_limit=60, workers=2, converge=True) == pytest.approx(optimum, abs=1e-4)


@pytest.mark.slow
@pytest.mark.parametrize("family, seed, without, optimum", CONVERGENCE_CASES)
def test_convergence_rows_in_the_pyomo_model_on_highs(family, seed, without, optimum):
    # the same two relaxations as the CP-SAT model's above, built in Pyomo and proven by HiGHS
    # (10-40 s each; the second case's CP-SAT proof alone takes about 30 s)
    from milp.highs import solve_highs
    from milp.mig_pyomo import scaled, time_unit

    p, objective = _convergence_instance(family, seed, optimum)
    unit = time_unit(objective)
    horizon = objective / unit * (1 + 1e-9) + 1e-9
    weak, strong = (solve_highs(build_assignment_model(scaled(p, unit), horizon=horizon, converge=rows), 120,
                                rel_gap=1e-9) for rows in (False, True))
    assert weak.optimal and strong.optimal
    assert weak.objective * unit == pytest.approx(without, abs=1e-4)
    assert strong.objective * unit == pytest.approx(optimum, abs=1e-4)


def test_a_placement_first_and_last_on_a_slice_pays_a_second_session():
    # A100 n = 6 seed 28: without the again[k, q] rows the relaxation's optimum (18.1606) has a placement
    # marked first and last on a slice another used placement covers, which one session cannot do; with
    # them it is 18.1706, the CP-SAT relaxation agrees, and both stay below the optimum (18.3042)
    from milp import Status, solve_optimal
    from milp.highs import solve_highs
    from milp.mig_cpsat import relaxation_bound

    p = mig.generate(n=6, gpu="A100", seed=28)
    exact = solve_optimal(p, backend="cpsat", time_limit=60, workers=2)
    assert exact.status is Status.OPTIMAL and mig.check(p, exact.schedule) == []
    weak, strong = (solve_highs(build_assignment_model(p, horizon=2 * exact.objective, second_sessions=rows), 60,
                                rel_gap=1e-9) for rows in (False, True))
    assert weak.optimal and strong.optimal
    assert weak.objective < strong.objective - 5e-3
    assert strong.objective <= exact.objective + 1e-6
    assert relaxation_bound(p, time_limit=20, workers=2) == pytest.approx(strong.objective, abs=1e-5)


@pytest.mark.slow
def test_highs_proves_the_instance_the_second_session_rows_closed():
    # A100 n = 12 MixedScaling/WideTimes seed 5: the relaxation stopped at 71.2728 without the again rows
    # and HiGHS left the instance open after 60 s; with them HiGHS proves 71.2739 (CP-SAT's optimum)
    from milp import solve_optimal

    p = mig.generate(n=12, gpu="A100", workload="MixedScaling", times="WideTimes", seed=5)
    res = solve_optimal(p, backend="highs", time_limit=120, workers=2)
    assert mig.check(p, res.schedule) == []
    assert res.proven and res.objective == pytest.approx(71.2739, abs=1e-4)
