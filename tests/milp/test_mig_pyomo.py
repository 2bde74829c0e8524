"""Tests of the Pyomo/HiGHS MILP for MIG scheduling (milp/mig_pyomo.py).

The oracle is an independent brute-force enumerator written here (it shares
no code with the model or its re-timing): every schedule is fixed by
discrete choices (placements, the task order; with reconfiguration also the
sessions, their task orders and the channel order of the operations), and
for fixed choices the earliest start times are optimal, so enumerating the
choices gives the exact optimum of tiny instances.
"""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from instances import gpus, mig
from instances.mig_retime import canonical
from milp import TOLERANCE
from milp import mig as milp_mig
from heuristics.mig_plans import best_plan, serial_on_root
from milp.result import Status

TOL = 1e-5


def solve_pyomo(problem, reconfiguration=True, solver="highs", **options):
    return milp_mig.solve(problem, backend=solver, reconfiguration=reconfiguration, **options)


# ---------------------------------------------------------------------------
# brute-force oracle

def _allowed(problem, task):
    return [p for p in problem.gpu.placements if p.size in task.times]


def _assignments(problem, create: bool):
    """All placement assignments with a simple lower bound, best bound first.

    The bound: tasks sharing a slice run one at a time (after their release,
    and with reconfiguration after at least one create on that slice).
    """
    tasks = list(problem.tasks)
    rel = problem.releases()
    gpu = problem.gpu
    out = []
    for assign in itertools.product(*[_allowed(problem, t) for t in tasks]):
        lb = 0.0
        for k in range(gpu.num_slices):
            on = [i for i, p in enumerate(assign) if k in p.slices]
            if on:
                c = min(gpu.create_time[assign[i].size] for i in on) if create else 0.0
                lb = max(lb, max(min(rel[tasks[i].name] for i in on), c)
                         + sum(tasks[i].times[assign[i].size] for i in on))
        out.append((lb, assign))
    out.sort(key=lambda x: x[0])
    return out


def brute_no_reconf(problem) -> float:
    """min over placements and task orders of the earliest-start makespan."""
    tasks = list(problem.tasks)
    rel = problem.releases()
    best = math.inf
    for lb, assign in _assignments(problem, False):
        if lb >= best:
            break
        for order in itertools.permutations(range(len(tasks))):
            end = {}
            for i in order:
                start = rel[tasks[i].name]
                for j, e in end.items():
                    if assign[i].intersects(assign[j]):
                        start = max(start, e)
                end[i] = start + tasks[i].times[assign[i].size]
            best = min(best, max(end.values()))
    return best


def _ordered_partitions(items):
    """Every way to split a sequence's permutations into consecutive runs (sessions)."""
    for perm in itertools.permutations(items):
        for cuts in itertools.product([False, True], repeat=len(perm) - 1):
            runs, cur = [], [perm[0]]
            for x, cut in zip(perm[1:], cuts):
                if cut:
                    runs.append(tuple(cur))
                    cur = [x]
                else:
                    cur.append(x)
            runs.append(tuple(cur))
            yield runs


def brute_reconf(problem) -> float:
    """Exact optimum with reconfiguration (rules 1-6) by enumeration.

    Choices: placements; per placement the sessions and their task orders; the
    channel sequence of the creates and destroys. Two intersecting sessions
    must be disjoint: the one created first is destroyed before the other's
    create. A destroy that no later intersecting create needs is left out
    (dropping an operation from the channel never delays anything), so the
    create order fixes the destroys and only their positions are enumerated.
    Earliest times for fixed choices are optimal.
    """
    gpu = problem.gpu
    tasks = list(problem.tasks)
    rel = problem.releases()
    best = math.inf
    for lb, assign in _assignments(problem, True):
        if lb >= best:
            break
        groups = {}
        for i, p in enumerate(assign):
            groups.setdefault(p, []).append(i)
        for split in itertools.product(*[list(_ordered_partitions(g)) for g in groups.values()]):
            sessions = [(p, run) for p, runs in zip(groups, split) for run in runs]
            k = len(sessions)
            for corder in itertools.permutations(range(k)):
                rank = {s: n for n, s in enumerate(corder)}
                dset = [any(sessions[s][0].intersects(sessions[t][0]) and rank[t] > rank[s]
                            for t in range(k) if t != s) for s in range(k)]
                dlist = [("d", s) for s in range(k) if dset[s]]
                for seq in _interleavings([("c", s) for s in corder], dlist):
                    pos = {op: n for n, op in enumerate(seq)}
                    ok = all(pos[("d", s)] > pos[("c", s)] for s in range(k) if dset[s])
                    for a, b in itertools.combinations(range(k), 2):
                        if not ok:
                            break
                        if sessions[a][0].intersects(sessions[b][0]):
                            first, second = (a, b) if rank[a] < rank[b] else (b, a)
                            ok = pos[("d", first)] < pos[("c", second)]
                    if ok:
                        best = min(best, _earliest(gpu, tasks, rel, sessions, seq, dset))
    return best


def _interleavings(base, extra):
    """All sequences of base (order kept) with the items of extra inserted anywhere, any order."""
    for perm in itertools.permutations(extra):
        n = len(base) + len(perm)
        for slots in itertools.combinations(range(n), len(perm)):
            seq, bi, ei = [], 0, 0
            for i in range(n):
                if ei < len(perm) and slots[ei] == i:
                    seq.append(perm[ei])
                    ei += 1
                else:
                    seq.append(base[bi])
                    bi += 1
            yield tuple(seq)


def _earliest(gpu, tasks, rel, sessions, seq, dset):
    """Earliest makespan for fixed sessions and channel sequence (ops in seq order)."""
    k = len(sessions)
    order_c = sorted(range(k), key=lambda s: seq.index(("c", s)))
    later = {s: [t for t in range(k) if t != s and sessions[s][0].intersects(sessions[t][0])
                 and order_c.index(t) > order_c.index(s)] for s in range(k)}
    op_end = {}
    task_end = {}
    chan = 0.0
    # operations in channel order; a destroy waits for its session's last task,
    # which waits for its create; creates wait for destroys of earlier intersecting sessions
    for op, s in seq:
        p = sessions[s][0]
        if op == "c":
            start = max([chan] + [op_end[("d", t)] for t in range(k) if s in later[t]])
            op_end[("c", s)] = start + gpu.create_time[p.size]
            t0 = op_end[("c", s)]
            for i in sessions[s][1]:
                t0 = max(t0, rel[tasks[i].name]) + tasks[i].times[p.size]
                task_end[i] = t0
        else:
            start = max(chan, task_end[sessions[s][1][-1]])
            op_end[("d", s)] = start + gpu.destroy_time[p.size]
        chan = op_end[(op, s)]
    return max(task_end.values())


# ---------------------------------------------------------------------------
# helpers

def T(name, times, **kw):
    return mig.Task(name, times, **kw)


def solve_checked(problem, reconfiguration, **kw):
    res = solve_pyomo(problem, reconfiguration=reconfiguration, **kw)
    assert res.schedule is not None
    assert mig.check(problem if reconfiguration else problem.without_reconfiguration(), res.schedule) == []
    assert res.lower_bound <= res.objective + TOL
    if res.status is Status.OPTIMAL:
        assert res.gap <= TOLERANCE
    assert math.isclose(res.objective, res.schedule.makespan, abs_tol=1e-9)
    if not reconfiguration:
        assert not res.schedule.reconfigurations
    return res


def short_tasks(n, gpu, seed):
    """Tasks as short as the create/destroy times, so reconfiguration matters."""
    import numpy as np

    g = gpus.get(gpu)
    rng = np.random.default_rng(seed)
    tasks = []
    for i in range(n):
        t, times = float(rng.uniform(0.1, 1.0)), {}
        for s in g.sizes:
            times[s] = t
            t *= float(rng.uniform(0.4, 1.0)) if s < max(g.sizes) else 1.0
        tasks.append(T(f"s{i}", times))
    return mig.Problem(gpu, tasks)


A30_TWO = mig.Problem("A30", [T("a", {1: 4.0, 2: 2.5, 4: 1.5}), T("b", {1: 4.0, 2: 2.5, 4: 1.5})])
A30_BIG_SMALL = mig.Problem("A30", [T("big", {1: 8.0, 2: 4.0, 4: 2.0}), T("s1", {1: 1.0, 2: 1.0, 4: 1.0}),
                                    T("s2", {1: 1.0, 2: 1.0, 4: 1.0})])


# ---------------------------------------------------------------------------
# hand-computed optima

def test_one_task_a30_hand_value():
    p = mig.Problem("A30", [T("a", {1: 4.0, 2: 2.5, 4: 1.5})])
    assert solve_checked(p, False).objective == pytest.approx(1.5)
    res = solve_checked(p, True)  # create 4@0 (0.13 s), then run 1.5 s
    assert res.status is Status.OPTIMAL and res.objective == pytest.approx(1.63)


def test_two_tasks_a30_hand_value():
    res = solve_checked(A30_TWO, False)  # 2@0 and 2@2 side by side beat 4@0 twice (3.0)
    assert res.status is Status.OPTIMAL and res.objective == pytest.approx(2.5)
    res = solve_checked(A30_TWO, True)  # creates of 2@0, 2@2 serialised: 0.12 + 0.12 + 2.5
    assert res.status is Status.OPTIMAL and res.objective == pytest.approx(2.74)
    ops = sorted(res.schedule.reconfigurations, key=lambda o: o.start)
    assert [o.op for o in ops] == ["create", "create"]


def test_big_and_two_small_a30_hand_value():
    # no reconfiguration: big on 4@0 for 2 s, then the small ones side by side: 3
    assert solve_checked(A30_BIG_SMALL, False).objective == pytest.approx(3.0)
    # with it: create 4@0 .13, big 2, destroy .10, create 1@0 .11, create 1@1 .11, small 1 -> 3.45
    res = solve_checked(A30_BIG_SMALL, True, relaxation=False)
    assert res.status is Status.OPTIMAL and res.objective == pytest.approx(3.45)
    assert any(o.op == "destroy" for o in res.schedule.reconfigurations)


@pytest.mark.parametrize("problem", [A30_TWO, A30_BIG_SMALL], ids=["two", "big_small"])
def test_hand_instances_match_brute_force(problem):
    assert brute_no_reconf(problem) == pytest.approx(solve_checked(problem, False).objective, abs=TOL)
    assert brute_reconf(problem) == pytest.approx(solve_checked(problem, True).objective, abs=TOL)


# ---------------------------------------------------------------------------
# generated instances against the brute force

@pytest.mark.parametrize("gpu,n,seed", [("A30", 4, 0), ("A30", 4, 1), ("A100", 3, 0), ("A100", 3, 5)])
def test_no_reconf_matches_brute_force(gpu, n, seed):
    p = mig.generate(n, gpu, "MixedScaling", "WideTimes", seed)
    res = solve_checked(p, False)
    assert res.status is Status.OPTIMAL
    assert res.objective == pytest.approx(brute_no_reconf(p), abs=TOL)
    assert res.lower_bound == pytest.approx(res.objective, abs=TOL)


# the slowest batch of the sweep with --run-slow only
@pytest.mark.parametrize("n,seed", [(2, 0), (3, 1), (3, 2), (4, 0), pytest.param(4, 3, marks=pytest.mark.slow)])
@pytest.mark.parametrize("relaxation", [True, False], ids=["with_R", "full_model"])
def test_reconf_short_tasks_match_brute_force(n, seed, relaxation):
    p = short_tasks(n, "A30", seed)
    res = solve_checked(p, True, relaxation=relaxation)
    assert res.status is Status.OPTIMAL
    assert res.objective == pytest.approx(brute_reconf(p), abs=TOL)


@pytest.mark.parametrize("gpu", ["A100", "H100"])
def test_reconf_short_tasks_two_on_seven_slices(gpu):
    p = short_tasks(2, gpu, 3)
    opt = brute_reconf(p)
    for relaxation in (True, False):
        res = solve_checked(p, True, relaxation=relaxation)
        assert res.status is Status.OPTIMAL and res.objective == pytest.approx(opt, abs=TOL)


@pytest.mark.parametrize("n,seed", [(2, 3), (4, 0)])
def test_reconf_generated_a100_matches_brute_force(n, seed):
    p = mig.generate(n, "A100", "MixedScaling", "WideTimes", seed)
    opt = brute_reconf(p)
    for relaxation in (True, False):
        res = solve_checked(p, True, relaxation=relaxation)
        assert res.status is Status.OPTIMAL and res.objective == pytest.approx(opt, abs=TOL)


@pytest.mark.parametrize("gpu,seed", [("A30", 10), ("A30", 11), ("A30", 12), ("A100", 13)])
def test_relaxation_bounds_are_below_the_optimum(gpu, seed):
    # neither relaxation (R: no sessions, no channel; the assignment relaxation) may cut off the optimum
    from milp.highs import solve_highs
    from milp.mig_pyomo import build_model
    from milp.mig_pyomo_assignment import build_assignment_model

    p = short_tasks(3, gpu, seed)
    opt = brute_reconf(p)
    for m in (build_model(p, horizon=2 * opt, sessions=False), build_assignment_model(p, horizon=2 * opt)):
        out = solve_highs(m, 60, rel_gap=1e-9)
        assert out.optimal
        assert out.objective <= opt + TOL
    res = solve_checked(p, True)
    assert res.objective == pytest.approx(opt, abs=TOL)


@settings(max_examples=12, deadline=None)
@given(st.lists(st.tuples(st.floats(0.05, 2.0), st.floats(0.3, 1.0), st.floats(0.3, 1.0)), min_size=1, max_size=2),
       st.booleans())
def test_random_a30_pairs_match_brute_force(raw, reconfiguration):
    tasks = [T(f"t{i}", {1: a, 2: a * f, 4: a * f * g}) for i, (a, f, g) in enumerate(raw)]
    p = mig.Problem("A30", tasks)
    res = solve_checked(p, reconfiguration, relaxation=False)
    opt = brute_reconf(p) if reconfiguration else brute_no_reconf(p)
    assert res.status is Status.OPTIMAL
    assert res.objective == pytest.approx(opt, abs=TOL)


# ---------------------------------------------------------------------------
# workloads (release times)

@pytest.mark.parametrize("relaxation", [True, False], ids=["with_R", "full_model"])
def test_workload_releases_respected_and_optimal(relaxation):
    b0 = mig.Problem("A30", [T("a", {1: 1.0, 2: 0.6, 4: 0.4}), T("b", {1: 0.5, 2: 0.4, 4: 0.35})])
    b1 = mig.Problem("A30", [T("c", {1: 0.8, 2: 0.5, 4: 0.3})], release=0.3)
    w = mig.Workload("A30", [b0, b1])
    for reconfiguration, brute in ((False, brute_no_reconf), (True, brute_reconf)):
        res = solve_checked(w, reconfiguration, relaxation=relaxation)
        start_c = next(r.start for r in res.schedule.tasks if r.task == "c")
        assert start_c >= 0.3 - 1e-9
        assert res.status is Status.OPTIMAL
        assert res.objective == pytest.approx(brute(w), abs=TOL)


# ---------------------------------------------------------------------------
# CP-SAT agreement (the other backend is written concurrently)

@pytest.mark.parametrize("gpu,n,seed", [("A30", 5, 0), ("A100", 5, 1)])
@pytest.mark.parametrize("reconfiguration", [False, True])
def test_agrees_with_cpsat(gpu, n, seed, reconfiguration):
    from milp import mig as milp_mig

    p = mig.generate(n, gpu, "MixedScaling", "WideTimes", seed)
    ours = solve_checked(p, reconfiguration, time_limit=30)
    theirs = milp_mig.solve(p, backend="cpsat", reconfiguration=reconfiguration, time_limit=30)
    if ours.status is Status.OPTIMAL and theirs.status is Status.OPTIMAL:
        assert ours.objective == pytest.approx(theirs.objective, rel=2 * TOLERANCE)
    # bounds are valid for each other in any case
    assert ours.lower_bound <= theirs.objective + 1e-3
    assert theirs.lower_bound <= ours.objective + 1e-3


# ---------------------------------------------------------------------------
# model pieces and interface

def test_subtree_symmetries():
    a30 = gpus.get("A30")
    assert [(a[0].name, b[0].name) for a, b in a30.symmetric_subtrees()] == [("2@0", "2@2"), ("1@0", "1@1"),
                                                                              ("1@2", "1@3")]
    # 3@4's children 2@4 and 1@6 differ, 3@0's 2@0 and 2@2 match on the A100
    names = {(a[0].name, b[0].name) for a, b in gpus.get("A100").symmetric_subtrees()}
    assert ("2@4", "1@6") not in names and ("2@0", "2@2") in names


@pytest.mark.parametrize("reconfiguration", [False, True])
def test_canonical_plan_keeps_feasibility_and_makespan(reconfiguration):
    p = mig.generate(8, "A100", "MixedScaling", "WideTimes", 4)
    if not reconfiguration:
        p = p.without_reconfiguration()
    plan = best_plan(p)
    can = canonical(p, plan)
    assert can.makespan == plan.makespan
    assert mig.check(p, can.schedule) == []
    first = {}
    order = {t.name: i for i, t in enumerate(p.tasks)}
    for A, B in p.gpu.symmetric_subtrees():
        on = [(order[r.task], r.placement) for r in can.schedule.tasks if r.placement in A + B]
        if on:
            first[A[0].name] = min(on, key=lambda x: x[0])[1] in A
    assert all(first.values())


def test_hint_is_used_and_never_worsens():
    p = mig.generate(6, "A30", "MixedScaling", "WideTimes", 2)
    hint = serial_on_root(p).schedule
    res = solve_checked(p, True, hint=hint, time_limit=30)
    assert res.objective <= hint.makespan + 1e-9


def test_time_limit_gives_checked_incumbent():
    p = mig.generate(12, "A100", "MixedScaling", "WideTimes", 7)
    res = solve_checked(p, True, time_limit=1.0, relaxation=False)
    assert res.status in (Status.FEASIBLE, Status.OPTIMAL)
    if res.status is Status.FEASIBLE:
        assert res.lower_bound < res.objective


def test_generic_pyomo_solver_path():
    # the path for solvers other than appsi HiGHS, exercised with Pyomo's contrib HiGHS interface
    from milp import mig_pyomo as mp

    p = mig.generate(4, "A30", "MixedScaling", "WideTimes", 1).without_reconfiguration()
    plan = best_plan(p)
    m = mp.build_model(p, plan.makespan * (1 + 1e-9))
    mp._set_start(m, canonical(p, plan))
    proven, term, has_sol, bound, obj, _ = mp._run_pyomo(m, "highs", 30, None, True)
    assert proven and has_sol and bound == pytest.approx(obj, rel=1e-6)
    assert mp._read_plan(m, p).makespan == pytest.approx(brute_no_reconf(p), abs=TOL)


def test_bad_hint_is_a_clear_error():
    from instances.errors import InstanceError

    bad = mig.Schedule("A30", [mig.ScheduledTask("a", gpus.get("A30").placement(4, 0), 0.0, 1.5)])
    with pytest.raises(InstanceError, match="hint"):
        solve_pyomo(A30_TWO, reconfiguration=False, hint=bad)


def test_given_lower_bound_is_used_as_floor():
    p = short_tasks(3, "A30", 4)
    opt = brute_reconf(p)
    res = solve_checked(p, True, relaxation=False, lower_bound=opt - 1e-9)
    assert res.status is Status.OPTIMAL and res.objective == pytest.approx(opt, abs=TOL)
    assert res.lower_bound >= opt - 1e-6


@pytest.mark.parametrize("reconfiguration", [False, True])
def test_solve_optimal_dispatches_to_highs(reconfiguration):
    from milp import solve_optimal

    res = solve_optimal(A30_BIG_SMALL, backend="highs", reconfiguration=reconfiguration)
    assert res.backend == "highs" and res.status is Status.OPTIMAL
    assert res.objective == pytest.approx(3.45 if reconfiguration else 3.0)
    target = A30_BIG_SMALL if reconfiguration else A30_BIG_SMALL.without_reconfiguration()
    assert mig.check(target, res.schedule) == []


def test_unknown_solver_is_a_clear_error():
    with pytest.raises(ValueError, match="not available"):
        solve_pyomo(A30_TWO, reconfiguration=False, solver="no_such_solver_xyz")


def test_zero_reconfiguration_gpu_solves_without_operations():
    p = A30_TWO.without_reconfiguration()
    res = solve_pyomo(p, reconfiguration=True)
    assert not res.schedule.reconfigurations
    assert mig.check(p, res.schedule) == []
    assert res.objective == pytest.approx(2.5)


# ---------------------------------------------------------------------------
# larger sweeps (run with --run-slow)

@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_slow_a100_four_tasks_match_brute_force(seed):
    p = mig.generate(4, "A100", "MixedScaling", "WideTimes", seed)
    assert solve_checked(p, False).objective == pytest.approx(brute_no_reconf(p), abs=TOL)
    assert solve_checked(p, True).objective == pytest.approx(brute_reconf(p), abs=TOL)


@pytest.mark.slow
@pytest.mark.parametrize("gpu,n", [("A100", 4), ("H100", 4), ("A30", 5)])
@pytest.mark.parametrize("seed", range(3))
def test_slow_short_tasks_reconf_match_brute_force(gpu, n, seed):
    p = short_tasks(n, gpu, seed)
    opt = brute_reconf(p)
    for relaxation in (True, False):
        res = solve_checked(p, True, relaxation=relaxation, time_limit=300)
        assert res.status is Status.OPTIMAL
        assert res.objective == pytest.approx(opt, abs=TOL)


@pytest.mark.slow
@pytest.mark.parametrize("workload", ["PoorScaling", "MixedScaling", "GoodScaling"])
@pytest.mark.parametrize("times", ["WideTimes", "NarrowTimes"])
@pytest.mark.parametrize("gpu", ["A30", "A100"])
def test_slow_agrees_with_cpsat_all_presets(workload, times, gpu):
    from milp import mig as milp_mig

    for seed in range(2):
        p = mig.generate(6, gpu, workload, times, seed)
        for reconfiguration in (False, True):
            ours = solve_checked(p, reconfiguration, time_limit=120)
            theirs = milp_mig.solve(p, backend="cpsat", reconfiguration=reconfiguration, time_limit=120)
            assert ours.lower_bound <= theirs.objective + 1e-3
            assert theirs.lower_bound <= ours.objective + 1e-3
            if ours.status is Status.OPTIMAL and theirs.status is Status.OPTIMAL:
                assert ours.objective == pytest.approx(theirs.objective, rel=2 * TOLERANCE)
