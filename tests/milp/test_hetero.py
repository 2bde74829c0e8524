"""Exact models of the heterogeneous-GPU scheduling paper: the MILP (1)-(6) with HiGHS and the CP-SAT model."""

import pytest

from instances import hetero
from instances.errors import OptionError
from instances.hetero import GPU, HeteroProblem, Task
from milp import Status, solve_optimal
from milp import hetero as mh

# two cases in the default suite (one machine, three machines); the rest with --run-slow,
# since the HiGHS formulation takes ~10 s on each
CASES = [(8, ("V100",), 3), (7, ("T4", "V100", "H100"), 1),
         pytest.param(6, ("T4", "A100-80GB"), 0, marks=pytest.mark.slow),
         pytest.param(8, ("L4", "A100-40GB"), 2, marks=pytest.mark.slow),
         pytest.param(7, ("T4", "T4", "H100"), 4, marks=pytest.mark.slow)]


@pytest.mark.parametrize("n,gpus,seed", CASES)
def test_backends_agree_on_optimum(n, gpus, seed):
    pb = hetero.generate(n, gpus=gpus, seed=seed)
    a = solve_optimal(pb, backend="cpsat", time_limit=30, workers=2)
    b = solve_optimal(pb, backend="highs", time_limit=30, workers=2)
    assert a.status is Status.OPTIMAL and b.status is Status.OPTIMAL
    assert a.objective == pytest.approx(b.objective, rel=1e-9, abs=1e-6)
    assert a.objective > 0  # the generator's deadlines make these instances non-trivial
    for r in (a, b):
        assert hetero.check(pb, r.schedule) == []
        assert hetero.weighted_tardiness(pb, r.schedule) == pytest.approx(r.objective)
        assert r.lower_bound == pytest.approx(r.objective, rel=1e-6, abs=1e-5)


def test_unfit_task_reported_by_both_backends():
    pb = hetero.generate(5, gpus=("T4", "V100"), seed=7, unfit=1)
    for backend in ("cpsat", "highs"):
        r = solve_optimal(pb, backend=backend, time_limit=20, workers=1)
        assert r.proven and r.schedule.unscheduled == list(pb.unfit)
        assert hetero.check(pb, r.schedule) == []


def test_time_limit_gives_feasible_not_optimal():
    pb = hetero.orlib_wt40(5)
    opt = hetero.orlib_wt40_optimum(5)
    for backend in ("cpsat", "highs"):
        r = solve_optimal(pb, backend=backend, time_limit=0.5, workers=1)
        assert r.status is Status.FEASIBLE
        assert r.objective >= opt and r.lower_bound <= opt


def test_big_m_from_data_and_model_size():
    pb = hetero.generate(4, gpus=("T4", "H100"), seed=0)
    # H = max a + sum of run times on each task's slowest eligible GPU
    slowest = [max(pb.p[i, j] for j in range(pb.m) if pb.eligible[i, j]) for i in range(pb.n)]
    assert mh.big_m(pb) == pytest.approx(pb.arrival.max() + sum(slowest))
    mdl = mh.build_pyomo(pb)
    # (6): two constraints per unordered pair and GPU; one y per pair
    assert len(mdl.y) == 6 and len(mdl.disj_a) == len(mdl.disj_b) == 12
    assert len(mdl.x) == 8 and len(mdl.memory) == 8


def test_inexact_data_gives_valid_bound():
    # durations 1/3 and 1/7 are not decimal: CP-SAT solves a rounded relaxation
    tasks = (Task("a", 1.0, deadline=0.3), Task("b", 1.0, deadline=0.2, weight=2.5),
             Task("c", 2.0, deadline=0.5, arrival=0.1))
    pb = HeteroProblem(tasks, (GPU("g", 3.0), GPU("h", 7.0)))
    assert mh.resolution(pb)[2] is False
    exact = solve_optimal(pb, backend="highs", time_limit=20)
    approx = solve_optimal(pb, backend="cpsat", time_limit=20)
    assert exact.proven
    assert approx.lower_bound <= exact.objective + 1e-9
    assert approx.objective >= exact.objective - 1e-9
    assert hetero.check(pb, approx.schedule) == []


def test_hint_and_bad_arguments():
    pb = hetero.generate(6, gpus=("T4", "V100"), seed=3)
    from heuristics import hetero as heur

    hint = heur.greedy(pb)
    for backend in ("cpsat", "highs"):
        r = solve_optimal(pb, backend=backend, time_limit=20, hint=hint)
        assert r.proven and r.objective <= hetero.weighted_tardiness(pb, hint)
    with pytest.raises(OptionError, match="field backend: must be one of"):
        solve_optimal(pb, backend="gurobi")
    with pytest.raises(OptionError, match="unknown option 'reconfiguration'"):
        solve_optimal(pb, reconfiguration=True)


def test_both_solvers_in_one_process():
    import highspy  # noqa: F401
    from ortools.sat.python import cp_model  # noqa: F401

    pb = HeteroProblem((Task("a", 2, deadline=1, weight=3), Task("b", 1, deadline=1)), (GPU("g", 1.0),))
    # by hand: b then a -> b done 1 (on time), a done 3 (2 late, w 3) = 6;
    #          a then b -> a done 2 (1 late, w 3) + b done 3 (2 late, w 1) = 5
    for backend in ("cpsat", "highs"):
        r = solve_optimal(pb, backend=backend, time_limit=10)
        assert r.proven and r.objective == pytest.approx(5)
        assert [a.task for a in sorted(r.schedule.assignments, key=lambda a: a.start)] == ["a", "b"]
