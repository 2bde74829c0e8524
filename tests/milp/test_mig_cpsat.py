"""CP-SAT model of the MIG problem: exactness, the two formulations agree, checked schedules."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bounds import mig as mig_bounds
from instances import gpus, mig
from instances.errors import InstanceError, OptionError
from milp import TOLERANCE, Status, solve_optimal
from milp import mig as milp_mig
from milp.mig_cpsat import session_slots, tree_schedule

PRESETS = ["PoorScaling", "MixedScaling", "GoodScaling"]


def solve_cpsat(problem, **options):
    return milp_mig.solve(problem, backend="cpsat", **options)


def _check(problem, res, reconf):
    target = problem if reconf else problem.without_reconfiguration()
    assert res.schedule is not None
    assert mig.check(target, res.schedule) == []
    assert res.lower_bound <= res.objective + 1e-9
    if res.status is Status.OPTIMAL:
        assert res.gap <= TOLERANCE
    assert res.objective == pytest.approx(res.schedule.makespan)
    if not reconf:
        assert res.schedule.reconfigurations == ()


def _brute_force_noreconf(problem):
    """Min over all assignments of the best *interval-model* schedule is what the
    laminar model claims; here: min over assignments of the largest slice load,
    computed independently by enumeration."""
    gpu = problem.gpu
    best = float("inf")
    options = [[p for p in gpu.placements if p.size in t.times] for t in problem.tasks]
    for combo in itertools.product(*options):
        load = [0.0] * gpu.num_slices
        for t, p in zip(problem.tasks, combo):
            for k in p.slices:
                load[k] += t.times[p.size]
        best = min(best, max(load))
    return best


@pytest.mark.parametrize("seed", range(3))
def test_laminar_model_matches_brute_force_on_a30(seed):
    p = mig.generate(n=4, gpu="A30", workload=PRESETS[seed], seed=seed)
    res = solve_cpsat(p, reconfiguration=False, time_limit=20, workers=1, hint=False)
    assert res.status is Status.OPTIMAL
    _check(p, res, False)
    assert res.objective == pytest.approx(_brute_force_noreconf(p), abs=1e-6)


@pytest.mark.parametrize("gpu,seed", [("A30", 1), ("A100", 2), ("A100", 5)])
def test_laminar_and_interval_models_agree(gpu, seed):
    """The laminar theorem (largest slice load = best schedule of an assignment) against
    the interval model that schedules every task explicitly."""
    p = mig.generate(n=6, gpu=gpu, seed=seed)
    lam = solve_cpsat(p, reconfiguration=False, time_limit=30, workers=2, hint=False, model="laminar")
    ivl = solve_cpsat(p, reconfiguration=False, time_limit=30, workers=2, hint=False, model="intervals")
    assert lam.status is Status.OPTIMAL and ivl.status is Status.OPTIMAL
    _check(p, lam, False)
    _check(p, ivl, False)
    assert lam.info["model"] == "laminar" and ivl.info["model"] == "intervals"
    # both are optimal for the float problem, within the tolerance
    assert abs(lam.objective - ivl.objective) <= 2 * TOLERANCE * lam.objective


@pytest.mark.parametrize("gpu,n,reconf", [("A100", 5, False), ("A30", 4, True)])
def test_symmetry_and_redundant_constraints_do_not_change_the_optimum(gpu, n, reconf):
    p = mig.generate(n=n, gpu=gpu, seed=7)
    if True:
        # the relaxation may close the solve before the full model runs (no model objective then)
        a = solve_cpsat(p, reconfiguration=reconf, time_limit=40, workers=2, hint=False, relax=False)
        b = solve_cpsat(p, reconfiguration=reconf, time_limit=40, workers=2, hint=False, symmetry=False,
                        redundant=False, relax=False)
        assert a.status is Status.OPTIMAL and b.status is Status.OPTIMAL
        assert a.info["model_objective"] == b.info["model_objective"]
        c = solve_cpsat(p, reconfiguration=reconf, time_limit=40, workers=2, hint=False)
        assert c.status is Status.OPTIMAL
        assert abs(c.objective - b.objective) <= 2 * TOLERANCE * b.objective


@pytest.mark.parametrize("gpu", ["A30", "A100"])
@pytest.mark.parametrize("preset", PRESETS)
def test_reconfiguration_costs_time(gpu, preset):
    """OPT(no reconf) <= OPT(reconf), both checked, both above the bounds."""
    p = mig.generate(n=4, gpu=gpu, workload=preset, seed=11)
    off = solve_cpsat(p, reconfiguration=False, time_limit=30, workers=2, hint=False)
    on = solve_cpsat(p, reconfiguration=True, time_limit=30, workers=2, hint=False)
    assert off.status is Status.OPTIMAL and on.status is Status.OPTIMAL
    _check(p, off, False)
    _check(p, on, True)
    assert mig_bounds.lower_bound(p.without_reconfiguration()) <= off.objective + 1e-9
    assert mig_bounds.lower_bound(p) <= on.objective + 1e-9
    assert off.lower_bound <= on.objective + 1e-9
    # the first task cannot start before a create: reconfiguration always costs something
    assert on.objective >= off.lower_bound + min(p.gpu.create_time.values()) - 1e-6


def test_single_task_optimum_is_exact():
    """One task: create its fastest instance, run it. Known optimum, to the resolution."""
    t = mig.Task("a", {1: 9.0, 2: 5.0, 4: 2.5})
    p = mig.Problem("A30", [t])
    res = solve_cpsat(p, time_limit=10, hint=False)
    assert res.status is Status.OPTIMAL
    assert res.objective == pytest.approx(0.13 + 2.5)
    assert res.lower_bound == pytest.approx(0.13 + 2.5)
    assert len(res.schedule.reconfigurations) == 1


def test_repartitioning_beats_one_instance():
    """A task that wants the whole A30 and two that scale only to 2 slices: the
    optimum runs the big one on 4@0, destroys it and runs the others side by side
    on 2@0 and 2@2 (10.47 s), instead of all three on 4@0 (15.13 s)."""
    big = mig.Task("b", {1: 40.0, 2: 20.0, 4: 5.0})
    mids = [mig.Task(f"m{i}", {1: 10.0, 2: 5.0, 4: 5.0}) for i in range(2)]
    p = mig.Problem("A30", [big, *mids])
    res = solve_cpsat(p, time_limit=20, hint=False)
    _check(p, res, True)
    assert res.status is Status.OPTIMAL
    assert res.objective == pytest.approx(0.13 + 5 + 0.10 + 0.12 + 0.12 + 5, abs=1e-6)
    assert [o.op for o in res.schedule.reconfigurations].count("destroy") == 1


def test_workload_release_times_are_respected():
    w = mig.generate_workload([3, 3], [0.0, 15.0], gpu="A30", seed=4)
    for reconf in (False, True):
        res = solve_cpsat(w, reconfiguration=reconf, time_limit=30, workers=2, hint=False)
        assert res.status is Status.OPTIMAL
        target = w if reconf else w.without_reconfiguration()
        assert mig.check(target, res.schedule) == []
        rel = w.releases()
        assert all(stt.start >= rel[stt.task] - 1e-9 for stt in res.schedule.tasks)
        assert mig_bounds.lower_bound(target) <= res.objective + 1e-9


def test_time_limit_never_claims_optimality_without_proof():
    p = mig.generate(n=12, gpu="A100", seed=0)
    res = solve_cpsat(p, reconfiguration=True, time_limit=1.0, workers=1, hint=False, relax=False)
    # without a hint the serial schedule is still known: never UNKNOWN
    assert res.status in (Status.FEASIBLE, Status.OPTIMAL)
    _check(p, res, True)
    if res.status is Status.OPTIMAL:  # only if really closed
        assert res.gap <= TOLERANCE


def test_lower_bound_survives_rounding():
    """A coarse resolution still gives a lower bound below the fine optimum."""
    p = mig.generate(n=5, gpu="A30", seed=3)
    fine = solve_cpsat(p, reconfiguration=False, time_limit=20, hint=False)
    coarse = solve_cpsat(p, reconfiguration=False, time_limit=20, hint=False, resolution=2)
    assert coarse.lower_bound <= fine.objective + 1e-9
    assert fine.lower_bound <= coarse.objective + 1e-9
    _check(p, coarse, False)


def test_given_hint_is_used_and_schedule_checked():
    p = mig.generate(n=4, gpu="A100", seed=1)
    first = solve_cpsat(p, time_limit=30, hint=False)
    again = solve_cpsat(p, time_limit=30, hint=first.schedule)
    assert again.info["hint"] == "given"
    assert again.objective == pytest.approx(first.objective, abs=1e-6)
    # the optimum's own assignment, fixed, reproduces the optimum
    fixed = solve_cpsat(p, time_limit=30, hint=first.schedule, fix_assignment=True)
    assert fixed.status is Status.OPTIMAL
    assert fixed.objective <= first.objective + 1e-6


def test_symmetric_subtrees_are_tree_isomorphic():
    a30 = gpus.get("A30")
    assert [(a[0].name, b[0].name) for a, b in a30.symmetric_subtrees()] == [("2@0", "2@2"), ("1@0", "1@1"),
                                                                              ("1@2", "1@3")]
    for gpu in ("A30", "A100", "H100"):
        g = gpus.get(gpu)
        for left, right in g.symmetric_subtrees():
            assert left == g.subtree(left[0]) and right == g.subtree(right[0])
            assert [(a.size, len(a.slices)) for a in left] == [(b.size, len(b.slices)) for b in right]
            assert g.parent(left[0]) == g.parent(right[0])


def test_session_slots_bound():
    p = mig.generate(n=6, gpu="A100", seed=0)
    gpu = p.gpu
    assert session_slots(p, gpu.root) == 1  # single batch: one root session suffices
    assert session_slots(p, gpu.placement(1, 0)) == 6
    w = mig.generate_workload([2, 2], [0.0, 5.0], gpu="A100", seed=0)
    assert session_slots(w, gpu.root) == 4


def test_session_slots_shrink_with_an_upper_bound():
    """1-slice tasks of 2, 3, 4 s on the A30 (create 0.11, destroy 0.10): below 5.5 s
    at most two sessions of 1@0 fit (2.11 + 3.21 = 5.32), below 5.3 s only one."""
    tasks = [mig.Task(f"t{i}", {1: d, 2: d, 4: d}) for i, d in enumerate([2.0, 3.0, 4.0])]
    p = mig.Problem("A30", tasks)
    leaf = p.gpu.placement(1, 0)
    assert session_slots(p, leaf) == 3
    assert session_slots(p, leaf, upper_bound=5.5) == 2
    assert session_slots(p, leaf, upper_bound=5.3) == 1
    assert session_slots(p, leaf, upper_bound=0.1) == 1  # never below one slot


def test_tree_schedule_meets_largest_slice_load():
    p = mig.generate(n=7, gpu="A100", seed=9)
    gpu = p.gpu
    assign = {t.name: gpu.placements[i % len(gpu.placements)] for i, t in enumerate(p.tasks)}
    sched = tree_schedule(p.without_reconfiguration(), assign)
    assert mig.check(p.without_reconfiguration(), sched) == []
    load = [0.0] * gpu.num_slices
    for t in p.tasks:
        for k in assign[t.name].slices:
            load[k] += t.times[assign[t.name].size]
    assert sched.makespan == pytest.approx(max(load))


def test_bad_arguments_raise_instance_errors():
    p = mig.generate(n=2, gpu="A30", seed=0)
    with pytest.raises(OptionError):
        solve_cpsat(p, resolution=0)
    with pytest.raises(OptionError):
        solve_cpsat(p, model="nonsense")
    with pytest.raises(OptionError):
        solve_cpsat(p, reconfiguration=True, model="laminar")
    with pytest.raises(InstanceError):
        solve_cpsat("not a problem")
    with pytest.raises(OptionError):
        solve_cpsat(p, fix_assignment=True, hint=False)


def test_solve_optimal_dispatches_to_the_mig_model():
    p = mig.generate(n=3, gpu="A30", seed=5)
    res = solve_optimal(p, backend="cpsat", reconfiguration=False, time_limit=10, hint=False)
    assert res.backend == "cpsat" and res.status is Status.OPTIMAL
    w = mig.generate_workload([2, 1], [0.0, 3.0], gpu="A30", seed=5)
    assert solve_optimal(w, backend="cpsat", reconfiguration=False, time_limit=10, hint=False).proven


def test_empty_problem():
    res = solve_cpsat(mig.Problem("A30", []), hint=False)
    assert res.status is Status.OPTIMAL and res.objective == 0.0


_times = st.lists(st.floats(min_value=0.5, max_value=30.0), min_size=3, max_size=3)


@st.composite
def small_problems(draw):
    n = draw(st.integers(1, 4))
    tasks = []
    for i in range(n):
        raw = sorted(draw(_times), reverse=True)  # non-increasing in the size
        tasks.append(mig.Task(f"t{i}", {1: raw[0], 2: raw[1], 4: raw[2]}))
    return mig.Problem("A30", tasks)


@settings(max_examples=6, deadline=None)
@given(small_problems())
def test_invariants_on_random_a30_batches(p):
    """Checked schedules; LB <= OPT(no reconf) <= OPT(reconf); the laminar optimum is the brute force."""
    off = solve_cpsat(p, reconfiguration=False, time_limit=20, workers=1, hint=False)
    on = solve_cpsat(p, reconfiguration=True, time_limit=20, workers=1, hint=False)
    assert off.status is Status.OPTIMAL and on.status is Status.OPTIMAL
    _check(p, off, False)
    _check(p, on, True)
    assert off.objective == pytest.approx(_brute_force_noreconf(p), rel=2 * TOLERANCE)
    assert mig_bounds.lower_bound(p.without_reconfiguration()) <= off.objective + 1e-9
    assert off.lower_bound <= on.objective + 1e-9
    assert mig_bounds.lower_bound(p) <= on.objective + 1e-9


@pytest.mark.slow
@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("seed", range(3))
def test_sweep_a100_n8_both_modes(preset, seed):
    p = mig.generate(n=8, gpu="A100", workload=preset, seed=seed)
    off = solve_cpsat(p, reconfiguration=False, time_limit=60, hint=False)
    on = solve_cpsat(p, reconfiguration=True, time_limit=120)
    _check(p, off, False)
    _check(p, on, True)
    assert off.lower_bound <= on.objective + 1e-9


# ---------------------------------------------------------------------------
# the assignment relaxation: a valid bound, and its tree schedules are feasible

_sizes = {"A30": (1, 2, 4), "A100": (1, 2, 3, 4, 7)}


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


def test_the_relaxation_keeps_its_optimum_under_cpsat_presolve():
    # OR-Tools 9.15's inclusion presolve certified OPTIMAL 116.7203 for this relaxation although a solution
    # of 116.5203 satisfies every constraint (https://github.com/google/or-tools/issues/5293);
    # milp.cpsat.SAFE_PARAMETERS turns that presolve step off. 116.5203 is also the instance's optimum,
    # proven by the whole solve.
    import math

    from milp import cpsat
    from milp.mig_cpsat import Scale
    from milp.mig_cpsat_model import build

    p = mig.generate(n=16, gpu="A100", workload="MixedScaling", times="WideTimes", seed=3101, p_sup=0.5)
    lb = mig_bounds.lower_bound(p)
    scale = Scale.of(p, 2.0 ** 20)
    built = build(p, scale, scale.units(lb), math.floor(122.8 * 2 ** 20) + 1, laminar=False, symmetry=True,
                  redundant=True, dominance=False, relaxation=True)
    run = cpsat.run(built.model, time_limit=60, workers=2, seed=0)
    assert run.status == "OPTIMAL"
    assert scale.bound(run.objective) == pytest.approx(116.5203, abs=1e-3)
    res = solve_optimal(p, backend="cpsat", time_limit=60, workers=2)
    assert res.status is Status.OPTIMAL and mig.check(p, res.schedule) == []
    assert res.objective == pytest.approx(116.5203, abs=1e-3)


@settings(max_examples=6, deadline=None)
@given(_small_batches())
def test_relaxation_bound_is_below_the_optimum(p):
    from milp.highs import solve_highs
    from milp.mig_cpsat import relaxation_bound
    from milp.mig_pyomo import scaled, time_unit
    from milp.mig_pyomo_assignment import build_assignment_model

    exact = solve_cpsat(p, time_limit=40, workers=2, hint=False, relax=False)
    assert exact.status is Status.OPTIMAL
    cp, cp_converge = (relaxation_bound(p, time_limit=20, workers=2, converge=rows) for rows in (False, True))
    assert cp <= cp_converge * (1 + 1e-9) and cp_converge <= exact.objective * (1 + 1e-9)
    # the same relaxation written for HiGHS (milp/mig_pyomo_assignment.py): the two optima agree (CP-SAT's
    # bound is its rounded model's less the rounding excess, so at most the true optimum), never above OPT;
    # leaving the create channel out relaxes it further
    # (on the scaled copy the HiGHS backend solves: HiGHS's tolerances are absolute; compared within the
    # contract's relative tolerance)
    unit = time_unit(exact.objective)
    horizon = exact.objective / unit * (1 + 1e-9)
    highs = [solve_highs(build_assignment_model(scaled(p, unit), horizon=horizon, channel=channel, converge=rows),
                         60, rel_gap=1e-9) for channel, rows in ((True, True), (True, False), (False, True))]
    assert all(out.optimal for out in highs)
    full_relax, no_rows, weak_relax = (out.objective * unit for out in highs)
    tol = TOLERANCE * exact.objective
    assert weak_relax <= full_relax + tol and no_rows <= full_relax + tol
    assert full_relax <= exact.objective + tol
    # the two formulations, written independently, agree with and without the convergence rows
    assert full_relax == pytest.approx(cp_converge, abs=tol)
    assert no_rows == pytest.approx(cp, abs=tol)
    assert cp <= no_rows + tol and no_rows - cp <= 2 * tol
    full = solve_cpsat(p, time_limit=40, workers=2, hint=False)
    assert mig.check(p, full.schedule) == []
    assert abs(full.objective - exact.objective) <= 2 * TOLERANCE * exact.objective


def test_an_unproven_relaxation_hands_its_bound_to_the_default_search():
    # A100 n = 20 seed 2310: its relaxation stays unproven in this 4 s budget (and for 60 s with max_lp
    # + no_lp), so after the full-search phase (milp.mig_cpsat.PROOF_SHARE of the budget) CP-SAT's
    # defaults go on with the proven bound as a row
    from milp.mig_cpsat import master_parameters

    assert master_parameters(2) == {"num_full_subsolvers": 2, "subsolvers": ["lb_tree_search", "no_lp"]}
    p = mig.generate(n=20, gpu="A100", workload="MixedScaling", times="WideTimes", seed=2310, p_sup=0.5)
    res = solve_optimal(p, backend="cpsat", time_limit=4, workers=2)
    relax = res.info["relaxation"]
    assert relax["status"] != "OPTIMAL"
    assert mig_bounds.lower_bound(p) <= relax["proof_phase_bound"] <= relax["bound"] <= res.lower_bound
    assert mig.check(p, res.schedule) == []
    assert res.lower_bound <= res.objective
    # a schedule of 140.9371 s is known (60 s solves), so no valid bound lies above it
    assert res.lower_bound <= 140.9371 + 1e-3


def test_tree_plans_are_feasible_for_every_assignment():
    from milp.mig_cpsat import tree_plans

    p = mig.generate(n=6, gpu="A100", seed=3)
    g = p.gpu
    for choice in range(4):
        assignment = {}
        for k, t in enumerate(p.tasks):
            ps = [q for q in g.placements if q.size in t.times]
            assignment[t.name] = ps[(k * 5 + choice * 3) % len(ps)]
        s = tree_plans(p, assignment)
        assert mig.check(p, s) == []
        assert {r.task: r.placement for r in s.tasks} == assignment


def test_benders_loop_proves_what_the_relaxation_leaves_open():
    # A30 n = 8 seed 24: the relaxation is proven at 75.842 but the best schedule of its assignment is
    # 75.952; one cut moves the master to the bound 75.952, which that schedule meets. Without the loop the
    # session model leaves the instance unproven after 60 s; the session model alone (no relaxation, an
    # independent path) proves the same optimum.
    p = mig.generate(n=8, gpu="A30", seed=24)
    res = solve_cpsat(p, time_limit=30, workers=2)
    _check(p, res, True)
    assert res.status is Status.OPTIMAL
    steps = res.info["benders"]
    assert steps and steps[0]["master_bound"] < res.objective * (1 - TOLERANCE)  # the loop had a gap to close
    assert steps[0]["next_master"] == "OPTIMAL"
    alone = solve_cpsat(p, time_limit=60, workers=2, relax=False)
    assert alone.status is Status.OPTIMAL
    assert abs(alone.objective - res.objective) <= 2 * TOLERANCE * res.objective


@settings(max_examples=4, deadline=None)
@given(st.sampled_from(["A30", "A100"]), st.integers(6, 8), st.integers(0, 10 ** 6))
def test_benders_bound_never_exceeds_the_optimum(gpu, n, seed):
    # the master with its cuts stays a relaxation: its bound is at most the optimum the session model
    # proves on its own, and both paths agree when both prove
    p = mig.generate(n=n, gpu=gpu, seed=seed)
    res = solve_cpsat(p, time_limit=20, workers=2)
    _check(p, res, True)
    alone = solve_cpsat(p, time_limit=60, workers=2, relax=False)
    assert res.lower_bound <= alone.objective * (1 + TOLERANCE)
    assert alone.lower_bound <= res.objective * (1 + TOLERANCE)
    if res.status is Status.OPTIMAL and alone.status is Status.OPTIMAL:
        assert abs(alone.objective - res.objective) <= 2 * TOLERANCE * res.objective


def test_strengthened_cut_holds_for_other_placements_of_the_dropped_tasks():
    # the deletion filter keeps only the tasks whose placements force the cut's value: every way of
    # placing the dropped tasks elsewhere must still give schedules at least that long
    import random

    from instances.options import Deadline
    from milp import mig_cpsat
    from milp.mig_cpsat import improve_assignment
    from milp.mig_cpsat_benders import deletion_filter

    p = mig.generate(n=8, gpu="A30", seed=24)
    opt = solve_cpsat(p, time_limit=30, workers=2)
    assert opt.status is Status.OPTIMAL
    # a good assignment whose best schedule is the optimum: the filter must keep enough tasks to force it
    assignment = {st.task: st.placement for st in opt.schedule.tasks}
    assignment = improve_assignment(p, assignment, Deadline(5))
    fixed = solve_cpsat(p, time_limit=30, workers=2, hint=mig.Schedule(p.gpu.name, [
        mig.ScheduledTask(t.name, assignment[t.name], 0.0, t.times[assignment[t.name].size]) for t in p.tasks]),
        fix_assignment=True, relax=False)
    assert fixed.status is Status.OPTIMAL
    target = fixed.lower_bound
    # no deadline: a filter cut short by a loaded machine keeps every task, which is valid but not what is tested
    kept = deletion_filter(p, assignment, target, Deadline(None), 2, 0, solve=mig_cpsat.solve_cpsat)
    dropped = [t for t in p.tasks if t.name not in kept]
    assert kept and dropped  # the cut is stronger than a no-good on all eight tasks
    rng = random.Random(0)
    for _ in range(4):
        other = dict(assignment)
        for t in dropped:
            other[t.name] = rng.choice([q for q in p.gpu.placements if q.size in t.times])
        hint = mig.Schedule(p.gpu.name, [mig.ScheduledTask(t.name, other[t.name], 0.0, t.times[other[t.name].size])
                                         for t in p.tasks])
        res = solve_cpsat(p, time_limit=30, workers=2, hint=hint, fix_assignment=True, relax=False)
        assert res.status is Status.OPTIMAL
        assert res.objective >= target * (1 - TOLERANCE)


@pytest.mark.parametrize("backend", ["cpsat", "highs"])
def test_a_hint_that_only_names_placements_is_accepted(backend):
    # the documented promise of `hint`: re-timed, so it need only name a placement for every task; with every
    # task at time 0 its session order is cyclic, and the placements are run in start order instead
    p = mig.generate(n=6, gpu="A30", seed=24)
    g = p.gpu
    hint = mig.Schedule(g.name, [mig.ScheduledTask(t.name, g.placement(1, k % 4), 0.0, t.times[1])
                                 for k, t in enumerate(p.tasks)])
    res = milp_mig.solve(p, backend=backend, time_limit=20, workers=2, hint=hint)
    _check(p, res, True)
    fixed = solve_cpsat(p, time_limit=20, workers=2, hint=hint, fix_assignment=True, relax=False)
    _check(p, fixed, True)
    assert {st.task: st.placement for st in fixed.schedule.tasks} == {st.task: st.placement for st in hint.tasks}
    assert res.objective <= fixed.objective * (1 + TOLERANCE)


def test_benders_resumes_an_assignment_whose_cut_was_too_weak(monkeypatch):
    # a subproblem that stops early cuts the master only with the bound it reached; when the master
    # returns the same assignment again, its subproblem must resume from that bound and schedule (not
    # start over) and the loop must still prove the optimum. The first subproblem of every assignment is
    # made to stop early: its bound is cut to a third of the way from the master's value to its own.
    import milp.mig_cpsat as mc
    from milp.result import Result

    p = mig.generate(n=8, gpu="A30", seed=24)
    real = mc.solve_cpsat
    returned = {}  # assignment -> (bound, schedule) its first subproblem returned
    resumed = []

    def stalling(problem, **kw):
        res = real(problem, **kw)
        if not kw.get("fix_assignment") or "lower_bound" not in kw:
            return res  # the outer solve, or the deletion filter's solves of subsets
        key = frozenset((st.task, st.placement.key()) for st in kw["hint"].tasks)
        if key in returned:
            bound, schedule = returned[key]
            resumed.append(kw["lower_bound"] >= bound and kw["incumbent"] is schedule)
            return res
        if res.lower_bound <= kw["lower_bound"]:
            return res
        weak = kw["lower_bound"] + (res.lower_bound - kw["lower_bound"]) / 3
        out = Result.from_bounds(res.objective, weak, schedule=res.schedule, backend="cpsat")
        returned[key] = (weak, out.schedule)
        return out

    monkeypatch.setattr(mc, "solve_cpsat", stalling)
    res = solve_cpsat(p, time_limit=60, workers=2)  # the outer call passes through unchanged
    monkeypatch.undo()
    assert resumed, "the master never returned an assignment twice"
    assert all(resumed)
    assert res.status is Status.OPTIMAL
    assert mig.check(p, res.schedule) == []
    assert res.objective == pytest.approx(solve_cpsat(p, time_limit=30, workers=2).objective, rel=2 * TOLERANCE)


def test_an_unproven_laminar_model_hands_its_bound_to_the_default_search():
    # without reconfiguration the laminar model is solved like the relaxation: full-search workers for
    # milp.mig_cpsat.PROOF_SHARE of the time, then CP-SAT's defaults with the bound proven so far as a row;
    # at n = 35 the first phase does not prove within 1.9 s (the bound stays near the area bound)
    from milp.mig_cpsat import PROOF_SHARE

    p = mig.generate(n=35, gpu="A100", workload="MixedScaling", times="WideTimes", seed=5100, p_sup=0.5)
    res = solve_optimal(p, backend="cpsat", reconfiguration=False, time_limit=3, workers=2)
    _check(p, res, reconf=False)
    first, second = res.info["runs"]
    assert first["status"] != "OPTIMAL" and first["resolution"] == second["resolution"]
    assert first["wall_time"] <= 3 * PROOF_SHARE + 0.5
    assert first["model_bound"] <= second["model_bound"]
    # a schedule of 261.3086 s is known (60 s solves), so no valid bound lies above it
    assert mig_bounds.lower_bound(p.without_reconfiguration()) <= res.lower_bound <= 261.3086 + 1e-3
    # one worker has no portfolio to choose: a single solve
    one = solve_optimal(p, backend="cpsat", reconfiguration=False, time_limit=1, workers=1)
    _check(p, one, reconf=False)
    assert len(one.info["runs"]) == 1


def test_the_session_model_build_stops_at_the_deadline():
    # the build of a large session model takes seconds; a solve whose time is out must not build it to the end
    import time

    from instances.options import Deadline
    from milp.mig_cpsat_model import OutOfTime, build
    from milp.mig_cpsat_scale import Scale

    p = mig.generate(n=60, gpu="A100", seed=3)
    deadline = Deadline(0.001)
    time.sleep(0.01)
    with pytest.raises(OutOfTime):
        build(p, Scale.of(p, 16.0), 0, 10 ** 6, laminar=False, symmetry=True, redundant=True, dominance=True,
              deadline=deadline)
    built = build(p, Scale.of(p, 16.0), 0, 10 ** 6, laminar=False, symmetry=True, redundant=True, dominance=True)
    assert len(built.start) == 60


def test_a_solve_out_of_time_before_the_session_model_keeps_the_contract(monkeypatch):
    # the deadline passing during the build: the best schedule and bound known so far, checked
    from milp import mig_cpsat_model

    def late(*args, **kwargs):
        raise mig_cpsat_model.OutOfTime

    monkeypatch.setattr("milp.mig_cpsat.build", late)
    p = mig.generate(n=10, gpu="A100", seed=4)
    res = solve_optimal(p, time_limit=20, workers=2, backend="cpsat")
    assert mig.check(p, res.schedule) == []
    assert res.lower_bound <= res.objective * (1 + TOLERANCE)
    assert res.info.get("stopped_before_session_model") or res.status is Status.OPTIMAL
