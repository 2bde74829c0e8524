"""FAR's approximation factor on a node, checked against the proven optimum (FAR paper, Sec. 5).

Sec. 5.1: on g A30s FAR's makespan is at most (8g - 1) / (4g) times the
optimum; Sec. 5.2: at most 2 on one A100/H100. Both ignore reconfiguration
times, so the checks run on nodes without them. Phase 3 only improves phase
2, so the phase-2 makespan (``refine=False``) is the one checked; the refined
one is checked too. On several A100s the paper states no factor (the phase-2
argument of Sec. 5.2 gives (13g - 1) / (6g) > 2 for g >= 2 with its first
case alone); the factor 2 is checked there as the open question it is.
"""

import pytest
from hypothesis import given, settings, strategies as st

from bounds import mig as mig_bounds
from bounds import mig_node as node_bounds
from heuristics import far_node
from instances import gpus, mig
from instances.mig_node import NodeProblem, check
from milp import Status, solve_optimal


@st.composite
def nodes(draw, gpu, gpu_counts=(1, 2, 3, 4), max_n=8):
    """Small nodes whose tasks scale in every way the model allows: flat, linear, super-linear, with ties."""
    sizes = gpus.get(gpu).sizes
    tasks = []
    for i in range(draw(st.integers(1, max_n))):
        t = draw(st.sampled_from([1.0, 2.0, 3.0, 4.0, 5.0, 8.0, 13.0]) | st.floats(0.5, 50.0))
        times, prev = {}, None
        for s in sizes:
            if prev is not None:
                linear = prev / s
                t *= draw(st.sampled_from([0.5 * linear, 0.9 * linear, linear, (linear + 1) / 2, 1.0]))
            times[s], prev = t, s
        tasks.append(mig.Task(f"t{i}", times))
    return NodeProblem(gpu, tasks, draw(st.sampled_from(gpu_counts))).without_reconfiguration()


def factor(problem: NodeProblem) -> float:
    if problem.gpu.name == "A30":
        return mig_bounds.approximation_factor("A30", gpus=problem.gpus)
    return 2.0


def _check_factor(problem: NodeProblem) -> tuple[float, float]:
    res = solve_optimal(problem, time_limit=120)
    assert res.status is Status.OPTIMAL
    assert check(problem, res.schedule) == []
    assert res.objective >= node_bounds.lower_bound(problem) * (1 - 1e-9)
    phase2, refined = far_node.plan(problem, refine=False), far_node.plan(problem)
    for plan in (phase2, refined):
        assert check(problem, plan.schedule) == []
    bound = factor(problem) * res.objective * (1 + 1e-9)
    assert refined.makespan <= phase2.makespan <= bound, (phase2.makespan / res.objective, factor(problem))
    return phase2.makespan / res.objective, factor(problem)


@settings(max_examples=25, deadline=None)
@given(nodes("A30"))
def test_far_within_the_a30_node_factor(problem):
    _check_factor(problem)


@settings(max_examples=25, deadline=None)
@given(nodes("A100", max_n=7))
def test_far_within_two_on_a100_nodes(problem):
    _check_factor(problem)


@pytest.mark.parametrize("g", [1, 2, 3])
def test_the_a30_construction_that_makes_one_gpu_tight(g):
    """One rigid task of 4 s and 4g - 1 tasks that are slightly super-linear on 4 slices.

    On one A30 every allocation of the family leaves the rigid task alone at the
    end: FAR ends at 7 - 3 * 0.01 while the optimum is 4 (the rigid task on one
    slice, the others on one slice each), 1.7425 against the factor 7/4. More
    GPUs share the short tasks out and the ratio falls, far from (8g - 1) / (4g).
    """
    tasks = [mig.Task("long", {1: 4.0, 2: 4.0, 4: 4.0})] + \
        [mig.Task(f"s{i}", {1: 4.0, 2: 2.0, 4: 0.99}) for i in range(4 * g - 1)]
    ratio, bound = _check_factor(NodeProblem("A30", tasks, g).without_reconfiguration())
    assert ratio == pytest.approx({1: 6.97 / 4, 2: 5.94 / 4, 3: 4.99 / 4}[g], rel=1e-9)
    assert ratio <= bound


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["A30", "A100", "H100"]).flatmap(lambda gpu: nodes(gpu, max_n=8)))
def test_far_factor_sweep(problem):
    _check_factor(problem)
