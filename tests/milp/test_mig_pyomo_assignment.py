"""Tests of the HiGHS assignment relaxation of the MIG model (milp/mig_pyomo_assignment.py).

The relaxation is written twice, as a CP-SAT model (``milp.mig_cpsat``) and as
a Pyomo MILP; proven optima of the two must agree, never exceed the proven
optimum of the full problem, and every start loaded by ``set_assignment``
must be a feasible point of the MILP.
"""

from __future__ import annotations

import pyomo.environ as pe
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from instances import mig
from instances.mig_retime import canonical
from milp import TOLERANCE
from milp import mig as milp_mig
from milp.highs import solve_highs
from milp.mig_cpsat import relaxation_bound
from milp.mig_pyomo_assignment import build_assignment_model, read_assignment, set_assignment
from milp.result import Status

_sizes = {"A30": [1, 2, 4], "A100": [1, 2, 3, 4, 7]}


@st.composite
def _small_batches(draw):
    gpu = draw(st.sampled_from(["A30", "A100"]))
    n = draw(st.integers(1, 5))
    # tiny tasks make the operations dominate (unused slices, one session); large ones the loads
    scale = draw(st.sampled_from([0.01, 1.0, 30.0]))
    tasks = []
    for i in range(n):
        times = sorted(draw(st.lists(st.floats(0.1, 3.0), min_size=len(_sizes[gpu]), max_size=len(_sizes[gpu]))),
                       reverse=True)
        tasks.append(mig.Task(f"t{i}", {s: scale * t for s, t in zip(_sizes[gpu], times)}))
    return mig.Problem(gpu, tasks)


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


@settings(max_examples=12, deadline=None)
@given(_small_batches())
def test_both_backends_agree_on_the_relaxation_and_stay_below_the_optimum(p):
    exact = milp_mig.solve(p, backend="cpsat", time_limit=40, workers=2, hint=False, relax=False)
    assert exact.status is Status.OPTIMAL
    m = build_assignment_model(p, horizon=exact.objective * (1 + 1e-9) + 1e-9)
    out = solve_highs(m, 60, rel_gap=1e-9)
    assert out.optimal
    assert out.objective <= exact.objective * (1 + 1e-9) + 1e-9
    cp = relaxation_bound(p, time_limit=30, workers=2)
    # CP-SAT's bound is its rounded model's, less the rounding excess: at most the true relaxation optimum
    assert cp <= out.objective * (1 + 1e-9) + 1e-9
    assert out.objective - cp <= 2 * TOLERANCE * max(1.0, exact.objective)
    assignment = read_assignment(m)
    assert sorted(assignment) == sorted(t.name for t in p.tasks)
    # leaving the channel out only relaxes it further
    weak = build_assignment_model(p, horizon=exact.objective * (1 + 1e-9) + 1e-9, channel=False)
    out_weak = solve_highs(weak, 60, rel_gap=1e-9)
    assert out_weak.optimal and out_weak.objective <= out.objective * (1 + 1e-9) + 1e-9


@pytest.mark.parametrize("seed", range(4))
def test_set_assignment_loads_a_feasible_point(seed):
    p = mig.generate(n=8, gpu="A100", seed=seed)
    g = p.gpu
    for choice in range(3):
        assignment = {}
        for k, t in enumerate(p.tasks):
            ps = [q for q in g.placements if q.size in t.times]
            assignment[t.name] = ps[(k * 5 + choice * 3 + seed) % len(ps)]
        m = build_assignment_model(p, horizon=1e6)
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
