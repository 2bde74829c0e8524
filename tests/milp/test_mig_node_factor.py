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


def test_the_worst_a30_node_found():
    """Three A30s, eight tasks: phase 2 at 1.864 times the optimum against the factor 23/12 = 1.917.

    The family has one allocation (its longest task, t3, already has a whole
    GPU). The three roots run t3, t4 and t0, t2, t6, t1, t5; the size-1 task t7
    (5.016 s, no faster on more slices) gets the first free leaf, on the GPU of
    t4, at 4.348. The optimum (5.0229) runs t7 on two slices next to t1, t5.
    """
    times = [{1: 453.4, 2: 57.58, 4: 1.409}, {1: 51.32, 2: 1.301, 4: 0.9822}, {1: 469.2, 2: 2.032, 4: 0.9834},
             {1: 7136.0, 2: 416.9, 4: 5.017}, {1: 19.31, 2: 19.31, 4: 4.348}, {1: 47070.0, 2: 1.286, 4: 0.9713},
             {1: 14.98, 2: 3.468, 4: 0.6749}, {1: 5.016, 2: 2.564, 4: 2.564}]
    problem = NodeProblem("A30", [mig.Task(f"t{i}", t) for i, t in enumerate(times)], 3).without_reconfiguration()
    ratio, bound = _check_factor(problem)
    assert far_node.plan(problem, refine=False).stats["allocations"] == 1
    assert ratio == pytest.approx((4.348 + 5.016) / 5.0229, rel=1e-6) and ratio <= bound


def test_the_worst_two_a100_node_found():
    """Two A100s, four tasks: phase 2 at 1.873 times the optimum, the worst a hill climb on task times found.

    GPU 0's root runs the short size-7 task t3 while GPU 1 splits at once and
    runs t0 (0.35 s) on its 4-slice instance; GPU 0 then takes t1, and t2 goes
    to the first 4-slice instance to free, GPU 1's at 0.35, ending at 0.6557.
    The optimum (0.35) runs t0 beside t3 and t1, t2 on the whole other GPU, so
    t1 + t2 take 4/7 of their 4-slice times there: with this mechanism phase 2
    stays below (1 + 7/8) times the optimum.
    """
    times = [{1: 6.863, 2: 1.839, 3: 1.226, 4: 0.35, 7: 0.35},
             {1: 4.067, 2: 1.370, 3: 0.5011, 4: 0.3062, 7: 0.1751},
             {1: 4.999, 2: 0.9245, 3: 0.6126, 4: 0.3057, 7: 0.1749},
             {1: 13.03, 2: 0.4854, 3: 0.2613, 4: 0.2109, 7: 0.06934}]
    problem = NodeProblem("A100", [mig.Task(f"t{i}", t) for i, t in enumerate(times)], 2).without_reconfiguration()
    ratio, bound = _check_factor(problem)
    assert ratio == pytest.approx((0.35 + 0.3057) / 0.35, rel=1e-9) and ratio <= bound


def test_the_worst_three_a100_node_found():
    """Three A100s, six tasks: phase 2 at 1.851 times the optimum, the worst found on three A100s.

    The family has one allocation (its longest task, t2, already has the whole
    GPU). GPU 0's root runs t2 while the other roots run the short size-7
    tasks and split, so their 4-slice instances take t0 and t3; when t2 ends
    the 4-slice instance of GPU 0 is the first free one and takes t1, which
    ends at 0.3523 + 0.2999. The optimum (0.3523) runs t2 alone and t1, t3 on
    the whole of another GPU.
    """
    times = [{1: 4.85, 2: 0.8405, 3: 0.7437, 4: 0.3494, 7: 0.3494},
             {1: 11.24, 2: 2.11, 3: 0.7263, 4: 0.2999, 7: 0.1714},
             {1: 261.8, 2: 1.985, 3: 1.177, 4: 0.856, 7: 0.3523},
             {1: 13.17, 2: 1.953, 3: 0.5472, 4: 0.3018, 7: 0.1805},
             {1: 215.0, 2: 1.974, 3: 0.1555, 4: 0.1283, 7: 0.0642},
             {1: 0.352, 2: 0.231, 3: 0.04452, 4: 0.01371, 7: 0.005316}]
    problem = NodeProblem("A100", [mig.Task(f"t{i}", t) for i, t in enumerate(times)], 3).without_reconfiguration()
    ratio, bound = _check_factor(problem)
    assert far_node.plan(problem, refine=False).stats["allocations"] == 1
    assert ratio == pytest.approx((0.3523 + 0.2999) / 0.3523, rel=1e-9) and ratio <= bound


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["A30", "A100", "H100"]).flatmap(lambda gpu: nodes(gpu, max_n=8)))
def test_far_factor_sweep(problem):
    _check_factor(problem)
