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
