"""Exact node solves: the result contract, the two methods against each other and against brute force."""

import itertools
import time

import pytest
from hypothesis import given, settings, strategies as st

from bounds import mig_node as node_bounds
from heuristics import far_node
from instances import mig, mig_node
from instances.errors import InstanceError, OptionError
from instances.mig_node import NodeProblem, NodeSchedule
from milp import TOLERANCE, Status, family_of, solve_optimal


def brute_force(problem: NodeProblem) -> float:
    """min over every assignment of tasks to GPUs (no symmetry breaking) of max_k OPT_1(tasks of GPU k)."""
    names = [t.name for t in problem.tasks]
    single: dict[frozenset, float] = {frozenset(): 0.0}

    def opt(block: frozenset) -> float:
        if block not in single:
            res = solve_optimal(problem.subproblem(block), backend="cpsat", time_limit=60)
            assert res.status is Status.OPTIMAL
            single[block] = res.objective
        return single[block]

    best = float("inf")
    for assign in itertools.product(range(problem.gpus), repeat=len(names)):
        blocks = [frozenset(nm for nm, k in zip(names, assign) if k == gpu) for gpu in range(problem.gpus)]
        best = min(best, max(opt(b) for b in blocks))
    return best


@st.composite
def small_nodes(draw, max_n=6, gpus=(2, 3), times=tuple(sorted(mig.TIME_PRESETS))):
    gpu = draw(st.sampled_from(("A30", "A100")))
    n = draw(st.integers(1, max_n))
    g = draw(st.sampled_from(gpus))
    times = draw(st.sampled_from(times))
    workload = draw(st.sampled_from(sorted(mig.SCALING_PRESETS)))
    return mig_node.generate(n, gpu, gpus=g, workload=workload, times=times, seed=draw(st.integers(0, 10_000)))


def _assert_contract(problem, res):
    assert res.schedule is not None and mig_node.check(problem, res.schedule) == []
    assert res.objective == pytest.approx(res.schedule.makespan, abs=0)
    assert res.lower_bound <= res.objective * (1 + TOLERANCE)
    assert res.lower_bound >= node_bounds.lower_bound(problem) * (1 - 1e-9)
    if res.status is Status.OPTIMAL:
        assert res.gap <= TOLERANCE


@settings(max_examples=12, deadline=None)
@given(small_nodes(max_n=7))
def test_the_three_methods_agree_without_reconfiguration(problem):
    problem = problem.without_reconfiguration()
    results = [solve_optimal(problem, method=m, time_limit=60) for m in ("laminar", "intervals", "decompose")]
    for res in results:
        _assert_contract(problem, res)
        assert res.status is Status.OPTIMAL
        assert res.objective == pytest.approx(results[0].objective, rel=2 * TOLERANCE)
    assert results[0].objective <= far_node.plan(problem).makespan * (1 + TOLERANCE)
    assert solve_optimal(problem, time_limit=60).info["method"] == "laminar"


@settings(max_examples=5, deadline=None)
@given(small_nodes(max_n=5, times=("NarrowTimes",)))
def test_decomposition_is_brute_force_with_reconfiguration(problem):
    """Equal-length tasks (NarrowTimes): no single task decides, the split does."""
    res = solve_optimal(problem, time_limit=120)
    _assert_contract(problem, res)
    assert res.status is Status.OPTIMAL and res.info["method"] == "decompose"
    assert res.objective == pytest.approx(brute_force(problem), rel=2 * TOLERANCE)


def test_brute_force_without_reconfiguration_on_a_harder_case():
    """Equal tasks that do not split evenly: the methods find the same optimum as every assignment."""
    problem = mig_node.generate(5, "A30", gpus=2, times="NarrowTimes", seed=3).without_reconfiguration()
    expected = brute_force(problem)
    for method in ("laminar", "intervals", "decompose"):
        res = solve_optimal(problem, method=method, time_limit=60)
        assert res.status is Status.OPTIMAL
        assert res.objective == pytest.approx(expected, rel=2 * TOLERANCE)


def test_one_gpu_node_is_the_single_gpu_optimum():
    single = mig.generate(6, "A100", times="NarrowTimes", seed=7)
    node = NodeProblem.from_problem(single, 1)
    want = solve_optimal(single, time_limit=60)
    for problem, ref in ((node, want), (node.without_reconfiguration(),
                                        solve_optimal(single.without_reconfiguration(), time_limit=60))):
        res = solve_optimal(problem, time_limit=60)
        assert res.status is ref.status is Status.OPTIMAL
        assert res.objective == pytest.approx(ref.objective, rel=2 * TOLERANCE)


def test_dispatch_hint_and_info():
    problem = mig_node.generate(6, "A30", gpus=2, seed=4)
    assert family_of(problem) == "mig_node"
    far_s = far_node.schedule(problem)
    res = solve_optimal(problem, hint=far_s, time_limit=60)
    assert res.info["hint"] == "given" and res.objective <= far_s.makespan
    none = solve_optimal(problem, hint=False, time_limit=60)
    assert none.info["hint"] == "none" and none.objective == pytest.approx(res.objective, rel=2 * TOLERANCE)
    off = solve_optimal(problem, reconfiguration=False, time_limit=60)
    assert off.info["method"] == "laminar" and not off.info["reconfiguration"]
    assert mig_node.check(problem.without_reconfiguration(), off.schedule) == []
    assert off.objective < res.objective


def test_time_limit_is_kept_and_the_result_stays_valid():
    problem = mig_node.generate(12, "A100", gpus=3, times="NarrowTimes", seed=1)
    for method, limit in (("decompose", 1.0), ("laminar", 0.5), ("intervals", 1.0)):
        p = problem if method == "decompose" else problem.without_reconfiguration()
        t0 = time.perf_counter()
        res = solve_optimal(p, method=method, time_limit=limit)
        assert time.perf_counter() - t0 <= limit + max(1.0, 0.1 * limit)
        _assert_contract(p, res)
        assert res.status in (Status.OPTIMAL, Status.FEASIBLE)
        assert res.objective <= far_node.plan(p).makespan * (1 + TOLERANCE)


def test_empty_node_is_optimal_zero():
    res = solve_optimal(NodeProblem("A30", [], gpus=2))
    assert res.status is Status.OPTIMAL and res.objective == 0.0 and res.schedule.gpus == 2


def test_bad_options():
    p = mig_node.generate(3, "A30", gpus=2, seed=0)
    with pytest.raises(OptionError, match="unknown option 'refin'"):
        solve_optimal(p, refin=1)
    with pytest.raises(OptionError, match="field backend"):
        solve_optimal(p, backend="highs")
    with pytest.raises(OptionError, match="field method"):
        solve_optimal(p, method="session")
    for method in ("laminar", "intervals"):
        with pytest.raises(OptionError, match="without reconfiguration"):
            solve_optimal(p, method=method)
    with pytest.raises(OptionError, match="field time_limit"):
        solve_optimal(p, time_limit=0)
    with pytest.raises(OptionError, match="field workers"):
        solve_optimal(p, workers=0)
    with pytest.raises(OptionError, match="field hint"):
        solve_optimal(p, hint=mig.Schedule("A30", []))
    with pytest.raises(OptionError, match="field hint"):
        solve_optimal(p, hint=NodeSchedule("A30", 3, []))
    with pytest.raises(OptionError, match="field hint"):
        solve_optimal(p, hint=NodeSchedule("A30", 2, []))
    with pytest.raises(InstanceError, match="too large"):
        solve_optimal(NodeProblem("A30", [mig.Task("a", {1: 1e308, 2: 1e308, 4: 1e308})], gpus=2))


def test_a_time_limited_bound_stays_below_the_optimum():
    """Stopped early, the decomposition's bound (relaxation without reconfiguration + first create, closed
    parts of the search) must not pass the optimum that a longer run proves."""
    problem = mig_node.generate(12, "A100", gpus=2, seed=2)
    quick = solve_optimal(problem, time_limit=1.0)
    full = solve_optimal(problem, time_limit=120)
    assert full.status is Status.OPTIMAL
    assert quick.lower_bound <= full.objective * (1 + TOLERANCE) <= quick.objective * (1 + 2 * TOLERANCE)
    relaxed = solve_optimal(problem.without_reconfiguration(), time_limit=60)
    assert full.objective >= relaxed.objective + min(problem.gpu.create_time.values()) - 1e-9
