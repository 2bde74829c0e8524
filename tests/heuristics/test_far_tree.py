"""The public tree API of FAR (heuristics/far_tree.py): what a new MIG heuristic builds on."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heuristics import far
from heuristics.far_tree import Tree, replay, to_schedule
from instances.mig_problem import MAX_TOTAL_TIME, check_scale
from instances import gpus, mig
from instances.errors import InstanceError

PRESETS = [(w, t) for w in ("PoorScaling", "MixedScaling", "GoodScaling") for t in ("WideTimes", "NarrowTimes")]


def _lists_of(problem, plan):
    """FarPlan's node task names as the API's index lists and durations."""
    index = {t.name: j for j, t in enumerate(problem.tasks)}
    lists = [[index[name] for name in node] for node in plan.node_tasks]
    durations = [t.time(plan.allocation[t.name]) for t in problem.tasks]
    return lists, durations


@pytest.mark.parametrize("name", ["A30", "A100", "H100"])
def test_tree_structure(name):
    gpu = gpus.get(name)
    tree = Tree(gpu)
    assert tree.n == len(gpu.placements) and tree.parent[0] == -1 and tree.depth[0] == 0
    for v in range(tree.n):
        assert tree.node(tree.placements[v]) == v == tree.node(tree.placements[v].key())
        for c in tree.children[v]:
            assert tree.parent[c] == v and tree.depth[c] == tree.depth[v] + 1
            assert set(tree.slices[c]) <= set(tree.slices[v])
        assert set(tree.descendants[v]) == {d for c in tree.children[v] for d in [c, *tree.descendants[c]]}
        assert v in tree.same_size[tree.size[v]]
    assert tree.leaves == [v for v in range(tree.n) if not tree.children[v]]
    with pytest.raises(InstanceError, match="not a placement"):
        tree.node((3, 1))


@settings(max_examples=40)
@given(gpu=st.sampled_from(["A30", "A100", "H100"]), preset=st.sampled_from(PRESETS), n=st.integers(1, 40),
       seed=st.integers(0, 10_000), reconf=st.booleans(), refine=st.booleans())
def test_replay_and_to_schedule_reproduce_far(gpu, preset, n, seed, reconf, refine):
    p = mig.generate(n, gpu, preset[0], preset[1], seed=seed)
    if not reconf:
        p = p.without_reconfiguration()
    plan = far.plan(p, refine=refine)
    lists, durations = _lists_of(p, plan)
    tree = Tree(p.gpu)
    assert replay(tree, lists, durations).makespan == plan.makespan
    assert to_schedule(tree, lists, durations, [t.name for t in p.tasks]) == plan.schedule


@settings(max_examples=60)
@given(gpu=st.sampled_from(["A30", "A100", "H100"]), n=st.integers(1, 25), seed=st.integers(0, 10_000),
       reconf=st.booleans(), data=st.data())
def test_any_node_task_lists_give_a_feasible_schedule(gpu, n, seed, reconf, data):
    # not only FAR's lists: any assignment of tasks to nodes of an allowed size, in any order
    p = mig.generate(n, gpu, "MixedScaling", "WideTimes", seed=seed)
    if not reconf:
        p = p.without_reconfiguration()
    tree = Tree(p.gpu)
    lists = [[] for _ in range(tree.n)]
    durations = []
    for j, task in enumerate(p.tasks):
        size = data.draw(st.sampled_from(task.sizes))
        node = data.draw(st.sampled_from(tree.same_size[size]))
        lists[node].insert(data.draw(st.integers(0, len(lists[node]))), j)
        durations.append(task.time(size))
    timing = replay(tree, lists, durations)
    sched = to_schedule(tree, lists, durations, [t.name for t in p.tasks], timing)
    assert mig.check(p, sched) == []
    assert sched.makespan == timing.makespan == max(timing.end)
    assert bool(sched.reconfigurations) == reconf


def _local_search(problem):
    """A small heuristic written against the public API only: move single tasks between nodes of one size."""
    plan = far.plan(problem, refine=False)
    tree = Tree(problem.gpu)
    lists, durations = _lists_of(problem, plan)
    best = replay(tree, lists, durations).makespan
    improved = True
    while improved:
        improved = False
        for v in range(tree.n):
            for j in list(lists[v]):
                for u in tree.same_size[tree.size[v]]:
                    if u == v:
                        continue
                    trial = [list(x) for x in lists]
                    trial[v].remove(j)
                    trial[u].append(j)
                    ms = replay(tree, trial, durations).makespan
                    if ms < best:
                        lists, best, improved = trial, ms, True
                        break
                if improved:
                    break
            if improved:
                break
    return plan, to_schedule(tree, lists, durations, [t.name for t in problem.tasks])


def test_a_new_heuristic_needs_no_private_names():
    better = 0
    for seed in range(12):
        p = mig.generate(10, ["A30", "A100"][seed % 2], seed=seed)
        plan, sched = _local_search(p)
        assert mig.check(p, sched) == []
        assert sched.makespan <= plan.phase2_makespan
        better += sched.makespan < plan.phase2_makespan
    assert better >= 1


def test_check_scale_accepts_large_times_and_refuses_overflowing_ones():
    tasks = [mig.Task(f"t{i}", {1: 7e305, 2: 3.6e305, 3: 2.4e305, 4: 1.8e305, 7: 1e305}) for i in range(10)]
    # with the A100's create times (tenths of a second) beside them, such times lose those in every sum
    with pytest.raises(InstanceError, match="would be lost"):
        check_scale(mig.Problem("A100", tasks))
    big = mig.Problem("A100", tasks).without_reconfiguration()
    check_scale(big)
    sched = far.schedule(big)
    assert mig.check(big, sched) == [] and sched.makespan < MAX_TOTAL_TIME
    huge = mig.Problem("A100", [mig.Task("t", {s: 1e308 for s in (1, 2, 3, 4, 7)})])
    with pytest.raises(InstanceError, match="too large"):
        check_scale(huge)
    w = mig.Workload("A30", [mig.Problem("A30", [mig.Task("a", {1: 1.0, 2: 1.0, 4: 1.0})], release=1.7e308)])
    with pytest.raises(InstanceError, match="too large"):
        check_scale(w)
