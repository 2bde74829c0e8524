"""FAR on a node of g MIG GPUs: feasibility, phase 2's timing, g = 1 is FAR itself, options."""

import pytest
from hypothesis import given, settings, strategies as st

from heuristics import far, far_node
from heuristics.far_node import _phase2, _timing
from heuristics.far_tree import Tree
from instances import mig, mig_node
from instances.errors import InstanceError, OptionError
from instances.mig_node import NodeProblem

GPUS = ("A30", "A100", "H100")


@st.composite
def node_problems(draw, max_n=14):
    gpu = draw(st.sampled_from(GPUS))
    n = draw(st.integers(1, max_n))
    g = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 10_000))
    workload = draw(st.sampled_from(sorted(mig.SCALING_PRESETS)))
    times = draw(st.sampled_from(sorted(mig.TIME_PRESETS)))
    p = mig_node.generate(n, gpu, gpus=g, workload=workload, times=times, seed=seed)
    return p if draw(st.booleans()) else p.without_reconfiguration()


@settings(max_examples=40, deadline=None)
@given(node_problems())
def test_schedules_pass_the_checker_and_refinement_never_hurts(problem):
    plan = far_node.plan(problem)
    assert mig_node.check(problem, plan.schedule) == []
    assert plan.makespan == plan.schedule.makespan <= plan.phase2_makespan
    assert sorted(plan.assignment) == sorted(t.name for t in problem.tasks)
    assert set(plan.assignment.values()) <= set(range(problem.gpus))
    unrefined = far_node.plan(problem, refine=False)
    assert unrefined.makespan == unrefined.phase2_makespan == plan.phase2_makespan
    assert mig_node.check(problem, unrefined.schedule) == []
    assert far_node.plan(problem).schedule == plan.schedule  # deterministic


@settings(max_examples=40, deadline=None)
@given(node_problems())
def test_phase2_times_are_those_of_a_replay_per_gpu(problem):
    """Each GPU's channel is its own: replaying each GPU's lists alone gives phase 2's makespan."""
    plan = far_node.plan(problem, refine=False)
    tree = Tree(problem.gpu)
    alloc = [plan.allocation[t.name] for t in problem.tasks]
    times = [dict(t.times) for t in problem.tasks]
    ms, lists = _phase2(tree, problem.gpus, alloc, times)
    assert ms == plan.phase2_makespan
    assert _timing(tree, lists, [times[j][s] for j, s in enumerate(alloc)])[1] == ms


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(GPUS), st.integers(1, 25), st.integers(0, 10_000), st.booleans(), st.booleans())
def test_one_gpu_is_far_itself(gpu, n, seed, reconfiguration, refine):
    p = mig.generate(n, gpu, seed=seed)
    p = p if reconfiguration else p.without_reconfiguration()
    mine = far_node.plan(NodeProblem.from_problem(p, 1), refine)
    theirs = far.plan(p, refine)
    assert mine.makespan == theirs.makespan and mine.phase2_makespan == theirs.phase2_makespan
    assert mine.allocation == theirs.allocation
    assert mine.schedule.part(0).tasks == theirs.schedule.tasks


def test_tasks_are_shared_out_by_the_common_heap():
    """Two A30s and eight equal rigid size-4 tasks: the roots take them in turn, four each."""
    tasks = [mig.Task(f"t{i}", {1: 8.0, 2: 4.0, 4: 1.0}) for i in range(8)]
    problem = NodeProblem("A30", tasks, gpus=2).without_reconfiguration()
    plan = far_node.plan(problem)
    assert plan.makespan == 4.0
    assert sorted(plan.assignment.values()) == [0] * 4 + [1] * 4
    assert all(st.placement.size == 4 for _, st in plan.schedule.tasks)


def test_refinement_moves_a_task_to_another_gpu():
    """Algorithm 2 over the forest: the critical instance's alternative may be on the other GPU."""
    problem = mig_node.generate(8, "A30", gpus=2, seed=10).without_reconfiguration()
    plan = far_node.plan(problem)
    unrefined = far_node.plan(problem, refine=False)
    assert plan.stats["moves"] == plan.stats["moves_between_gpus"] == 1 and plan.stats["swaps"] == 0
    assert plan.makespan < plan.phase2_makespan
    moved = [name for name, k in plan.assignment.items() if unrefined.assignment[name] != k]
    assert len(moved) == 1
    assert mig_node.check(problem, plan.schedule) == []


def test_empty_node():
    plan = far_node.plan(NodeProblem("A100", [], gpus=3))
    assert plan.makespan == 0.0 and plan.schedule.gpus == 3 and plan.schedule.tasks == ()


def test_methods_registry():
    p = mig_node.generate(6, "A30", gpus=2, seed=0)
    assert list(far_node.METHODS) == ["FAR", "FAR without refinement"]
    for method in far_node.METHODS.values():
        assert mig_node.check(p, method(p)) == []


def test_bad_input_and_options():
    p = mig_node.generate(4, "A30", gpus=2, seed=0)
    with pytest.raises(OptionError, match="unknown option 'refin'"):
        far_node.plan(p, refin=False)
    with pytest.raises(OptionError, match="unknown option 'refin'"):
        far_node.schedule(p, refin=False)
    with pytest.raises(OptionError, match="refine"):
        far_node.plan(p, refine="no")
    with pytest.raises(OptionError, match="max_iterations"):
        far_node.plan(p, max_iterations=-1)
    with pytest.raises(OptionError, match="min_improvement"):
        far_node.plan(p, min_improvement=1.0)
    with pytest.raises(OptionError):
        far_node.far_refined(p, refine=False)
    with pytest.raises(InstanceError, match="must be of type instances.mig_node.NodeProblem, got Problem"):
        far_node.plan(mig.generate(4, "A30", seed=0))
    huge = NodeProblem("A30", [mig.Task("a", {1: 1e308, 2: 1e308, 4: 1e308})], gpus=2)
    with pytest.raises(InstanceError, match="too large"):
        far_node.plan(huge)
