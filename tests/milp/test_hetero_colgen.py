"""The column-generation exact method of the heterogeneous problem: proofs agree with CP-SAT's and brute force."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from bounds.hetero_colgen import colgen_bound
from heuristics.hetero import fifo
from instances import hetero
from instances.hetero import GPU, HeteroProblem, Task
from milp import solve_optimal
from instances.options import Deadline
from milp.hetero_colgen import restricted_master, root

_spec = importlib.util.spec_from_file_location("colgen_tests", Path(__file__).parents[1] / "bounds" /
                                               "test_hetero_colgen.py")
_bounds = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_bounds)


@pytest.mark.parametrize("n,seed", [(8, 11), (10, 12), pytest.param(12, 13, marks=pytest.mark.slow)])
def test_colgen_proof_agrees_with_cpsat(n, seed):
    pb = hetero.generate(n, seed=seed)
    ours = solve_optimal(pb, time_limit=120)
    assert ours.backend == "colgen"
    ref = solve_optimal(pb, backend="cpsat", time_limit=120)
    assert ours.proven and ref.proven
    assert ours.objective == pytest.approx(ref.objective, abs=1e-6)
    assert not hetero.check(pb, ours.schedule)
    assert hetero.weighted_tardiness(pb, ours.schedule) == pytest.approx(ours.objective)


def test_tiny_problems_proven_equal_to_brute_force():
    cases = [HeteroProblem((Task("a", 6, 8, 3, 2, 0), Task("b", 4, 40, 2, 1, 1), Task("c", 5, 8, 4, 3, 2),
                            Task("d", 3, 8, 1, 1, 0)), (GPU("s", 1.0, 16), GPU("f", 2.5, 80))),
             HeteroProblem((Task("a", 6, 0, 3, 2, 0), Task("b", 4, 0, 2, 1, 1), Task("c", 5, 0, 4, 3, 2)),
                           (GPU("s", 1.0), GPU("t", 1.0)))]
    for pb in cases:
        res = solve_optimal(pb, time_limit=60)
        assert res.proven
        assert res.objective == pytest.approx(_bounds.brute_multi(pb))


def test_restricted_master_builds_a_checked_schedule_no_worse_than_its_columns():
    pb = hetero.generate(15, seed=21)
    start = fifo(pb)
    res = colgen_bound(pb, start, time_limit=60)
    sched = restricted_master(pb, res.pool, 30)
    assert sched is not None and not hetero.check(pb, sched)
    # the incumbent's own columns are in the pool: the picked cover is no worse than it
    assert hetero.weighted_tardiness(pb, sched) <= hetero.weighted_tardiness(pb, start) + 1e-6
    assert hetero.weighted_tardiness(pb, sched) >= res.bound - 1e-6


def test_root_never_returns_a_worse_schedule_and_its_bound_stays_below():
    pb = hetero.generate(18, seed=22)
    start = fifo(pb)
    sched, lb, info, _ = root(pb, start, Deadline(30))
    opt = solve_optimal(pb, backend="cpsat", time_limit=120)
    assert opt.proven
    assert hetero.weighted_tardiness(pb, sched) <= hetero.weighted_tardiness(pb, start) + 1e-6
    assert lb <= opt.objective + 1e-6
    if info["proved"]:
        assert hetero.weighted_tardiness(pb, sched) == pytest.approx(opt.objective)


# ---------------------------------------------------------------------------------------------------------------
# branch-and-price (milp.hetero_bnp)
# ---------------------------------------------------------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from milp.hetero_bnp import applies, branch_and_price  # noqa: E402


@settings(max_examples=40, deadline=None)
@given(_bounds.tiny(), st.integers(1, 6), st.integers(0, 3))
def test_tree_from_a_weak_root_proves_the_brute_force_optimum(pb, passes, nodes):
    """From an unconverged root (a few pricing passes) and the FIFO schedule: with no limit the tree proves the
    brute-force optimum; stopped after a few nodes its bound stays below it."""
    start = fifo(pb)
    rt = colgen_bound(pb, start, time_limit=None, max_iter=passes)
    if rt is None or not applies(rt) or rt.proved:
        return
    best = _bounds.brute_multi(pb)
    sched, lb, info = branch_and_price(pb, start, rt, Deadline(None), max_nodes=nodes)
    assert not hetero.check(pb, sched)
    assert hetero.weighted_tardiness(pb, sched) <= hetero.weighted_tardiness(pb, start) + 1e-9
    assert lb <= best + 1e-9 * max(1.0, best)
    sched, lb, info = branch_and_price(pb, start, rt, Deadline(None))
    assert info["proved"]
    assert hetero.weighted_tardiness(pb, sched) == pytest.approx(best)
    assert lb == pytest.approx(best)


@pytest.mark.parametrize("n,seed,gpus,kind", [(16, 31, None, "assignment"),
                                               pytest.param(16, 34, None, None, marks=pytest.mark.slow),
                                               (18, 13, ("T4",), "time")])
def test_tree_optimum_equals_cpsat(n, seed, gpus, kind):
    """Generated instances whose root (from the FIFO schedule) leaves a gap, so the tree branches (``kind``:
    on the assignment, on completion times with one GPU, or either where strong branching picks a completion
    time on several GPUs): its proven optimum is CP-SAT's, and a tree cut off after two nodes keeps a bound
    below it."""
    pb = hetero.generate(n, seed=seed) if gpus is None else hetero.generate(n, gpus, seed=seed)
    start = fifo(pb)
    # the one-GPU instance's root closes with ng-routes; without them it leaves the gap the tree must close
    rt = colgen_bound(pb, start, time_limit=60, ng=gpus is None)
    assert applies(rt) and rt.converged
    ref = solve_optimal(pb, backend="cpsat", time_limit=120)
    if gpus is not None:
        closed = colgen_bound(pb, start, time_limit=60, ng=True)
        assert rt.bound <= closed.bound <= ref.objective + 1e-6
    assert ref.proven
    sched, lb, info = branch_and_price(pb, start, rt, Deadline(120))
    assert info["proved"] and not hetero.check(pb, sched)
    kinds = [kind] if kind else ["time", "assignment"]
    assert info["nodes"] > 1 and sum(info.get(k, 0) for k in kinds) >= 1
    assert hetero.weighted_tardiness(pb, sched) == pytest.approx(ref.objective, abs=1e-6)
    assert lb == pytest.approx(ref.objective, abs=1e-6)
    _, lb2, info2 = branch_and_price(pb, start, rt, Deadline(120), max_nodes=2)
    assert lb2 <= ref.objective + 1e-6


def test_lp_probes_leave_the_master_as_the_node_had_it(monkeypatch):
    """Branching candidates are also valued by the master LP restricted to each child's columns: after the
    probes every column bound of the master is the node's again, and the tree proves the optimum the tree
    without these probes proves."""
    import numpy as np

    import milp.hetero_bnp as bnp

    pb = hetero.generate(16, seed=31)
    start = fifo(pb)
    rt = colgen_bound(pb, start, time_limit=60)
    monkeypatch.setattr(bnp, "LP_PROBE", False)
    plain, _, pinfo = branch_and_price(pb, start, rt, Deadline(120))
    same = []
    branch = bnp._Tree.branch

    def spy(self, *args):
        before = self.master.upper.copy()
        kids = branch(self, *args)
        same.append(np.array_equal(before, self.master.upper))
        return kids

    monkeypatch.setattr(bnp, "LP_PROBE", True)
    monkeypatch.setattr(bnp._Tree, "branch", spy)
    sched, lb, info = branch_and_price(pb, start, rt, Deadline(120))
    assert pinfo["proved"] and info["proved"] and info["nodes"] > 1
    assert same and all(same)
    assert not hetero.check(pb, sched)
    assert hetero.weighted_tardiness(pb, sched) == pytest.approx(hetero.weighted_tardiness(pb, plain), abs=1e-6)
    assert lb == pytest.approx(hetero.weighted_tardiness(pb, plain), abs=1e-6)


def test_tree_keeps_its_time_limit_and_a_valid_bound():
    # a root of five pricing passes: the first node's column generation alone outlasts the limit
    pb = hetero.generate(70, seed=23)
    start = fifo(pb)
    rt = colgen_bound(pb, start, time_limit=30, max_iter=5)
    t = Deadline(2.0)
    sched, lb, info = branch_and_price(pb, start, rt, t)
    assert t.elapsed() < 4.0 and not info["proved"]
    assert not hetero.check(pb, sched)
    assert lb <= hetero.weighted_tardiness(pb, sched) + 1e-9
    assert lb >= rt.bound - 1e-9


def test_a_master_lp_that_fails_twice_stops_the_tree_with_a_valid_bound(monkeypatch):
    """HiGHS answering neither optimal nor out of time (it did, kUnknown, on a warm-started master at n = 80):
    the master retries from scratch, then the tree stops as at its deadline, keeping its best schedule and a
    bound below the optimum, and says so in ``info``."""
    import highspy

    pb = hetero.generate(16, seed=31)
    start = fifo(pb)
    rt = colgen_bound(pb, start, time_limit=60)
    ref = solve_optimal(pb, backend="cpsat", time_limit=120)
    assert ref.proven
    monkeypatch.setattr(highspy.Highs, "getModelStatus", lambda self: highspy.HighsModelStatus.kUnknown)
    sched, lb, info = branch_and_price(pb, start, rt, Deadline(120))
    assert info["lp_failures"] and not info["proved"]
    assert not hetero.check(pb, sched)
    assert lb <= ref.objective + 1e-6 and lb >= rt.bound - 1e-9


def test_tree_with_a_small_master_proves_the_same_optimum(monkeypatch):
    """Columns deleted from the master (kept to a few dozen) come back when they price out again: the proof
    is the one of the full master (itself checked against CP-SAT above)."""
    import milp.hetero_bnp as bnp

    pb = hetero.generate(16, seed=34)
    start = fifo(pb)
    rt = colgen_bound(pb, start, time_limit=60)
    first, _, full = branch_and_price(pb, start, rt, Deadline(120))
    ref = hetero.weighted_tardiness(pb, first)
    monkeypatch.setattr(bnp, "MAX_COLUMNS", 60)
    sched, lb, info = branch_and_price(pb, start, rt, Deadline(120))
    assert full["proved"] and info["proved"] and info["nodes"] > 1 and info["deleted_columns"] > 0
    assert not hetero.check(pb, sched)
    assert hetero.weighted_tardiness(pb, sched) == pytest.approx(ref, abs=1e-6)
    assert lb == pytest.approx(ref, abs=1e-6)


def test_inexact_grid_skips_the_tree_and_still_agrees_with_cpsat():
    """Run times of a third of a unit hold on no decimal grid: the root rounds them (a valid relaxation), the
    tree does not apply, CP-SAT gets the rest; a proof agrees with CP-SAT's own."""
    base = hetero.generate(8, seed=3)
    pb = HeteroProblem(base.tasks, (GPU("one", 1.0, 80.0), GPU("three", 3.0, 80.0)))
    ours = solve_optimal(pb, time_limit=6)   # the ILS walks take shares of the limit: a short one is enough
    assert ours.backend == "colgen" and "tree_nodes" not in ours.info
    ref = solve_optimal(pb, backend="cpsat", time_limit=60)
    assert not hetero.check(pb, ours.schedule)
    assert ours.lower_bound <= ref.objective + 1e-6
    assert ours.proven and ref.proven
    assert ours.objective == pytest.approx(ref.objective, abs=1e-6)


def test_the_root_lp_is_rounded_before_the_first_node():
    """The root's last master LP (``support``) covers every task once (the master's rows), on the classes'
    GPUs within their completions' grid; the tree rounds it before any node, so even with no node processed
    it returns a checked schedule no worse than the FIFO one, and a bound below it."""
    import numpy as np

    pb = hetero.generate(30, seed=24)
    start = fifo(pb)
    for passes in (4, None):
        rt = colgen_bound(pb, start, time_limit=30, max_iter=passes or 10 ** 4)
        cover = np.zeros(pb.n)
        for gpus, tasks, times, lam in rt.support:
            assert lam > 0 and len(tasks) == len(times)
            assert all(pb.eligible[i, gpus[0]] for i in tasks)
            assert all(t >= pb.arrival[i] + pb.p[i, gpus[0]] - 1e-9 for i, t in zip(tasks, times))
            np.add.at(cover, list(tasks), lam)
        assert np.allclose(cover, 1.0, atol=1e-6)
        sched, lb, info = branch_and_price(pb, start, rt, Deadline(None), max_nodes=0)
        assert info["roundings"] == 1 and info["nodes"] == 0
        assert not hetero.check(pb, sched)
        assert rt.bound - 1e-9 <= lb <= hetero.weighted_tardiness(pb, sched) <= hetero.weighted_tardiness(pb, start)


def test_a_rounding_out_of_time_runs_no_search():
    """The tree's rounding of an LP support ends without a local search once the deadline has passed (the ILS
    takes only a positive time limit), and keeps its incumbent."""
    import time

    from milp.hetero_bnp import _Tree

    pb = hetero.generate(12, seed=4)
    start = fifo(pb)
    res = colgen_bound(pb, start, time_limit=20)
    tree = _Tree(pb, res.grid, start, 0, False)
    pos = {int(t): i for i, t in enumerate(res.grid.tasks)}
    cls = {j: c for c in tree.classes for j in c.gpus}
    supp = []
    for j in range(pb.m):
        mine = sorted((x for x in start.assignments if pb.gpu_index[x.gpu] == j), key=lambda x: x.end)
        if mine:
            tasks = np.array([pos[pb.index[x.task]] for x in mine], np.int64)
            supp.append((1.0, cls[j], tasks, np.array([x.end for x in mine])))
    dl = Deadline(1e-6)
    time.sleep(0.01)
    before = tree.best_obj
    tree.round_support(supp, dl)
    assert tree.roundings == 0 and tree.best_obj == before
    # with time left, the same support is rounded and searched from
    tree.round_support(supp, Deadline(5.0))
    assert tree.roundings == 1 and tree.best_obj <= before


def test_the_root_walks_of_a_small_problem_stop_at_their_kick_budget(monkeypatch):
    # sub-microsecond tasks: the grid is not exact, so the root cannot prove and tries its ILS walks; on
    # five tasks each walk ends at its kicks, long before its share of a 20 s budget
    from heuristics import hetero as hh
    from milp import hetero_colgen as mc

    calls, original = [], hh.ils

    def recorded(problem, **kw):
        calls.append(kw)
        return original(problem, **kw)

    monkeypatch.setattr(hh, "ils", recorded)
    tasks = tuple(Task(f"t{i}", 1e-6 * (i + 1), 0.0, 2e-6, 1.0 + i, 0.0) for i in range(5))
    pb = HeteroProblem(tasks, (GPU("g", 1.0), GPU("h", 2.0)))
    best, lb, info, _ = root(pb, fifo(pb), Deadline(20.0))
    assert calls and all(kw["max_iter"] == mc.ILS_KICKS_PER_TASK * pb.n for kw in calls)
    assert all(kw["time_limit"] > 1.0 for kw in calls)     # the budget, not the time, ended them
    assert hetero.check(pb, best) == [] and lb <= hetero.weighted_tardiness(pb, best) + 1e-12
