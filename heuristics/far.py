"""FAR: Family of Allocations and Repartitioning (seed 000, Sections 3-5).

FAR schedules a batch of moldable tasks on a MIG GPU in three phases:

1. **Phase 1** (Sec. 3.1, Turek et al.): a family of allocations (a size per
   task). The first gives every task the smallest size minimising its work
   ``s * t(s)``; each next one moves the currently longest task to the
   work-minimising size among the larger ones; the family ends when the longest
   task cannot grow. See :func:`family`.
2. **Phase 2** (Algorithm 1, Sec. 3.2): list scheduling of one allocation on the
   repartitioning tree (Figure 4), with a min-heap of instances by end time,
   LPT order within each size and create/destroy operations serialised through
   the global ``reconfig_end``. The best allocation of the family wins. See
   :func:`schedule_allocation`.
3. **Phase 3** (Algorithm 2, Sec. 3.3): refinement by task moves and swaps, in
   :mod:`heuristics.far_refine`.

Multi-batch concatenation (Sec. 4) lives in :mod:`heuristics.far_multibatch`;
:func:`schedule` and :func:`plan` dispatch to it for a
:class:`~instances.mig.Workload`.

Deterministic tie-breaking (the seed leaves it open):

* phase 1: on equal work the smaller size wins; on equal longest times the
  task that comes first in the input is moved;
* phase 2: LPT ties go to the task that comes first in the input; heap ties
  (equal end times) go to the node that comes first in the BFS order of the
  repartitioning tree (``gpu.placements``);
* among allocations with the same phase-2 makespan the first in the family wins.

Speed (the issue's targets): an allocation whose lower bound
``max(h_max, W / slices)`` is not below the best makespan so far cannot win and
is skipped; since ``W`` never decreases along the family (each move goes to a
size whose work was already >= the current one), the scan stops for good once
``W / slices`` reaches the best makespan. Consecutive allocations differ in one
task, so the LPT lists per size are updated by one ordered removal and one
ordered insertion instead of a re-sort, and a phase-2 simulation aborts as soon
as a task ends at or after the best makespan.

Examples
--------
>>> from instances import mig
>>> from heuristics import far
>>> problem = mig.generate(n=12, gpu="A100", seed=0)
>>> p = far.plan(problem)
>>> mig.check(problem, p.schedule)
[]
>>> p.makespan <= p.phase2_makespan
True

Command line::

    python -m heuristics.far tasks.json [--gpu A100] [--no-refine] [--json out.json] [--plot gantt.png]
"""

from __future__ import annotations

import argparse
import bisect
import heapq
import math
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from instances import gpus
from instances.errors import InstanceError
from instances.files import parse_json, read_text
from instances.gpus import GPUSpec, Placement
from instances.mig_problem import Problem, Task, Workload
from instances.mig_schedule import Reconfiguration, Schedule, ScheduledTask

__all__ = ["FarPlan", "RepartitionTree", "TreeNode", "family", "schedule_allocation", "plan", "schedule",
           "phase2_bound", "load_tasks", "main"]

_INF = math.inf


# ---------------------------------------------------------------------------
# The repartitioning tree as flat arrays (nodes in BFS order, node 0 = root)

class _Tree:
    """Figure 4's tree of one GPU as index arrays, for the hot loops."""

    def __init__(self, gpu: GPUSpec) -> None:
        self.gpu = gpu
        self.placements: list[Placement] = list(gpu.placements)
        index = {p.key(): i for i, p in enumerate(self.placements)}
        self.n = len(self.placements)
        self.size = [p.size for p in self.placements]
        self.children = [[index[c.key()] for c in gpu.children(p)] for p in self.placements]
        self.parent = [-1] * self.n
        for v, kids in enumerate(self.children):
            for c in kids:
                self.parent[c] = v
        self.tc = [float(gpu.create_time[s]) for s in self.size]
        self.td = [float(gpu.destroy_time[s]) for s in self.size]
        self.slices = [sorted(p.slices) for p in self.placements]
        self.num_slices = gpu.num_slices
        self.same_size = {s: [v for v in range(self.n) if self.size[v] == s] for s in gpu.sizes}
        self.leaves = [v for v in range(self.n) if not self.children[v]]
        desc: list[list[int]] = [[] for _ in range(self.n)]
        for v in reversed(range(self.n)):  # BFS order reversed: children before parents
            for c in self.children[v]:
                desc[v] += [c] + desc[c]
        self.descendants = desc


# ---------------------------------------------------------------------------
# Problem data as plain lists (the hot loops avoid attribute and dict lookups)

class _Data:
    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.gpu = problem.gpu
        self.tree = _Tree(problem.gpu)
        self.names = [t.name for t in problem.tasks]
        self.n = len(self.names)
        self.times: list[dict[int, float]] = [dict(t.times) for t in problem.tasks]
        # Phase 1: a^1 per task; larger sizes are looked up lazily (few tasks ever move)
        self.first: list[int] = [_argmin_work(tt, 0) for tt in self.times]  # type: ignore[misc]


def _argmin_work(tt: Mapping[int, float], above: int) -> int | None:
    """Smallest size > ``above`` minimising s * t(s) (ties: the smaller size)."""
    best = None
    best_w = _INF
    for s, t in tt.items():
        if s > above:
            w = s * t
            if w < best_w or (w == best_w and s < best):  # type: ignore[operator]
                best, best_w = s, w
    return best


# ---------------------------------------------------------------------------
# Phase 1

def _family_steps(data: _Data) -> Iterator[tuple[int, int, int] | None]:
    """Yield ``None`` for the first allocation, then ``(task, old size, new size)`` per next one."""
    times = data.times
    cur = list(data.first)
    heap = [(-times[j][cur[j]], j) for j in range(data.n)]
    heapq.heapify(heap)
    yield None
    while heap:
        _, j = heap[0]  # the longest task; ties: first in input order
        old = cur[j]
        new = _argmin_work(times[j], old)
        if new is None:
            return  # the longest task already has its largest size
        cur[j] = new
        heapq.heapreplace(heap, (-times[j][new], j))
        yield (j, old, new)


def _allocations(data: _Data) -> Iterator[list[int]]:
    alloc = list(data.first)
    for step in _family_steps(data):
        if step is not None:
            j, _, new = step
            alloc[j] = new
        yield alloc


def family(problem: Problem) -> list[dict[str, int]]:
    """Phase 1 (Sec. 3.1): the family of allocations, each ``{task name: size}``.

    Parameters
    ----------
    problem
        A single batch.

    Returns
    -------
    list of dict
        ``a^1, a^2, ...``: ``a^1`` gives each task the smallest size minimising
        ``s * t(s)``; ``a^{k+1}`` moves the longest task of ``a^k`` (first in
        input order on ties) to the work-minimising size among the larger ones
        (smaller size on ties); the family ends when the longest task cannot grow.

    Examples
    --------
    >>> from instances.mig import Problem, Task
    >>> p = Problem("A30", [Task("a", {1: 8.0, 2: 4.5, 4: 2.5}), Task("b", {1: 2.0, 2: 1.5, 4: 1.0})])
    >>> family(p)
    [{'a': 1, 'b': 1}, {'a': 2, 'b': 1}, {'a': 4, 'b': 1}]
    """
    data = _Data(problem)
    return [dict(zip(data.names, alloc)) for alloc in _allocations(data)]


# ---------------------------------------------------------------------------
# Phase 2: Algorithm 1

def _phase2(tree: _Tree, groups: Mapping[int, list[tuple[float, int]]], n: int,
            best: float = _INF) -> tuple[float, list[list[int]]] | None:
    """Algorithm 1 on one allocation; ``None`` as soon as a task ends at or after ``best``.

    ``groups[s]`` lists ``(-t_j(s), j)`` of the tasks given size ``s``, sorted
    (LPT, ties by input order). Returns the makespan and the task indices of
    every node in execution order.
    """
    size = tree.size
    children = tree.children
    tc = tree.tc
    td = tree.td
    top = max(size) + 1
    queue: list[list[tuple[float, int]]] = [groups.get(s) or [] for s in range(top)]  # type: ignore[misc]
    ptr = [0] * top
    lens = [len(q) for q in queue]
    node_tasks: list[list[int]] = [[] for _ in range(tree.n)]
    heap = [(0.0, 0)]
    pop = heapq.heappop
    push = heapq.heappush
    reconfig_end = 0.0
    remaining = n
    makespan = 0.0
    while heap:
        end, v = pop(heap)
        s = size[v]
        p = ptr[s]
        if p < lens[s]:
            mine = node_tasks[v]
            if not mine:  # give time for the instance's creation (lines 11-14)
                if end > reconfig_end:
                    reconfig_end = end
                reconfig_end += tc[v]
                end = reconfig_end
            negt, j = queue[s][p]
            ptr[s] = p + 1
            mine.append(j)
            end = end - negt
            if end >= best:
                return None
            if end > makespan:
                makespan = end
            remaining -= 1
            push(heap, (end, v))
        elif remaining:
            if node_tasks[v]:  # give time to destroy it (lines 26-28)
                if end > reconfig_end:
                    reconfig_end = end
                reconfig_end += td[v]
            for c in children[v]:
                push(heap, (end, c))
    return makespan, node_tasks


@dataclass
class _Timing:
    """Exact times of a tree with fixed task lists (Algorithm 1 replayed)."""

    start: list[float]
    end: list[float]
    create: list[float | None]      # create start per node (None: never created)
    destroy: list[float | None]     # destroy start per node, when a descendant runs tasks
    node_end: list[float]           # last task end per node (0 if none)
    makespan: float


def _replay(tree: _Tree, node_tasks: Sequence[Sequence[int]], dur: Sequence[float]) -> _Timing:
    """Algorithm 1 with each node's task list fixed (line 26 of Algorithm 2).

    Replaying the lists phase 2 produced gives exactly phase 2's times; after
    refinement it recomputes every start, create and destroy. A destroy that
    Algorithm 1 counts (it serialises reconfig_end) but no descendant needs is
    not emitted: the instance simply lives on.
    """
    size = tree.size
    children = tree.children
    tc = tree.tc
    td = tree.td
    n_tasks = sum(len(lst) for lst in node_tasks)
    start = [0.0] * len(dur)
    endt = [0.0] * len(dur)
    create: list[float | None] = [None] * tree.n
    destroy: list[float | None] = [None] * tree.n
    node_end = [0.0] * tree.n
    ptr = [0] * tree.n
    heap = [(0.0, 0)]
    reconfig_end = 0.0
    remaining = n_tasks
    makespan = 0.0
    has_desc_tasks = [any(node_tasks[d] for d in tree.descendants[v]) for v in range(tree.n)]
    while heap:
        end, v = heapq.heappop(heap)
        lst = node_tasks[v]
        p = ptr[v]
        if p < len(lst):
            if p == 0:
                if end > reconfig_end:
                    reconfig_end = end
                create[v] = reconfig_end
                reconfig_end += tc[v]
                end = reconfig_end
            j = lst[p]
            ptr[v] = p + 1
            start[j] = end
            end = end + dur[j]
            endt[j] = end
            node_end[v] = end
            if end > makespan:
                makespan = end
            remaining -= 1
            heapq.heappush(heap, (end, v))
        elif remaining:
            if lst:
                if end > reconfig_end:
                    reconfig_end = end
                if has_desc_tasks[v]:
                    destroy[v] = reconfig_end
                reconfig_end += td[v]
            for c in children[v]:
                heapq.heappush(heap, (end, c))
    del size
    return _Timing(start, endt, create, destroy, node_end, makespan)


# ---------------------------------------------------------------------------
# Results: the repartitioning tree report and the plan

@dataclass
class TreeNode:
    """One instance of the repartitioning tree with the tasks it runs.

    Attributes
    ----------
    placement
        The MIG instance (``size@start``).
    tasks
        ``(name, start, end)`` in execution order.
    create, destroy
        Start of its create / destroy operation (``None`` when there is none).
    depth
        Depth in the tree (root 0).
    """

    placement: Placement
    tasks: list[tuple[str, float, float]]
    create: float | None
    destroy: float | None
    depth: int

    @property
    def end(self) -> float:
        return self.tasks[-1][2] if self.tasks else 0.0


@dataclass
class RepartitionTree:
    """Algorithm 1's output tree (Figure 4 with tasks), printable as a report."""

    gpu: str
    nodes: list[TreeNode]
    makespan: float

    def lines(self) -> list[str]:
        out = [f"Repartitioning tree ({self.gpu}):"]
        for nd in self.nodes:
            pad = "--" * nd.depth
            names = ", ".join(t[0] for t in nd.tasks)
            ends = ", ".join(f"{t[2]:.4g}" for t in nd.tasks)
            extra = ""
            if nd.create is not None:
                extra += f", created={nd.create:.4g}"
            if nd.destroy is not None:
                extra += f", destroyed={nd.destroy:.4g}"
            out.append(f"{pad}Node({nd.placement.name}, slices={sorted(nd.placement.slices)}, "
                       f"tasks=[{names}], ends=[{ends}]{extra})")
        out.append(f"Tree makespan: {self.makespan:.6g}")
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())


@dataclass
class FarPlan:
    """A FAR result for one batch.

    Attributes
    ----------
    schedule
        The final schedule (checked feasible in the tests).
    tree
        The repartitioning tree with its tasks (``print(plan.tree)``).
    allocation
        ``{task name: size}`` of the winning allocation.
    phase2_makespan
        Makespan after phase 2 (before refinement).
    makespan
        Final makespan (after refinement when enabled).
    stats
        ``allocations`` (family members visited: the scan stops once
        ``W / slices`` reaches the best makespan), ``allocations_tried`` (phase-2 runs),
        ``allocations_pruned`` (skipped by the lower bound), ``allocation_index``
        (winner's index in the family), ``moves``, ``swaps``, ``iterations``,
        ``p_ref`` (Sec. 6.6: ``(phase2 / refined - 1) * 100``), ``seconds``.
    """

    problem: Problem
    schedule: Schedule
    tree: RepartitionTree
    allocation: dict[str, int]
    phase2_makespan: float
    makespan: float
    stats: dict[str, Any] = field(default_factory=dict)
    node_tasks: list[list[str]] = field(default_factory=list, repr=False)

    def __str__(self) -> str:
        return str(self.tree)


def _build(data: _Data, alloc: Sequence[int], node_tasks: Sequence[Sequence[int]]) -> tuple[Schedule,
                                                                                          RepartitionTree, float]:
    """Schedule and tree report from fixed node task lists."""
    tree = data.tree
    dur = [data.times[j][alloc[j]] for j in range(data.n)]
    tm = _replay(tree, node_tasks, dur)
    pl = tree.placements
    tasks = []
    ops = []
    nodes = []
    depth = [0] * tree.n
    for v in range(1, tree.n):
        depth[v] = depth[tree.parent[v]] + 1
    reconf = data.gpu.reconfigurable

    def dfs(v: int) -> None:
        lst = node_tasks[v]
        rows = [(data.names[j], tm.start[j], tm.end[j]) for j in lst]
        nodes.append(TreeNode(pl[v], rows, tm.create[v], tm.destroy[v], depth[v]))
        for c in tree.children[v]:
            dfs(c)

    dfs(0)
    for v in range(tree.n):
        for j in node_tasks[v]:
            tasks.append(ScheduledTask(data.names[j], pl[v], tm.start[j], tm.end[j]))
        if reconf and tm.create[v] is not None:
            ops.append(Reconfiguration("create", pl[v], tm.create[v], tm.create[v] + tree.tc[v]))
        if reconf and tm.destroy[v] is not None:
            ops.append(Reconfiguration("destroy", pl[v], tm.destroy[v], tm.destroy[v] + tree.td[v]))
    ops.sort(key=lambda o: o.start)
    tasks.sort(key=lambda t: (t.start, t.placement.start))
    sched = Schedule(data.gpu, tasks, ops, tm.makespan)
    return sched, RepartitionTree(data.gpu.name, nodes, tm.makespan), tm.makespan


def _groups(data: _Data, alloc: Sequence[int]) -> dict[int, list[tuple[float, int]]]:
    groups: dict[int, list[tuple[float, int]]] = {s: [] for s in data.gpu.sizes}
    for j, s in enumerate(alloc):
        groups[s].append((-data.times[j][s], j))
    for q in groups.values():
        q.sort()
    return groups


def _search(data: _Data, prune: bool = True) -> dict[str, Any]:
    """Phases 1+2 over the whole family; the best allocation and its node lists.

    Phase 1 runs inline (same rules as :func:`_family_steps`) so that its heap
    of current times also gives h_max, and the LPT lists per size are updated
    by one removal and one insertion per step.
    """
    tree = data.tree
    n = data.n
    S = float(tree.num_slices)
    times = data.times
    alloc = list(data.first)
    groups = _groups(data, alloc)
    heap = [(-times[j][alloc[j]], j) for j in range(n)]
    heapq.heapify(heap)
    W = math.fsum(alloc[j] * times[j][alloc[j]] for j in range(n))
    best = _INF
    best_alloc: list[int] = list(alloc)
    best_lists: list[list[int]] = [[] for _ in range(tree.n)]
    best_index = 0
    tried = pruned = 0
    k = 0
    while True:
        h = -heap[0][0]
        if prune and W / S * (1 - 1e-9) >= best:
            break  # W never decreases along the family: nothing later can win
        if prune and h >= best:
            pruned += 1
        else:
            tried += 1
            res = _phase2(tree, groups, n, best if prune else _INF)
            if res is not None and res[0] < best:
                best, best_lists = res
                best_alloc = list(alloc)
                best_index = k
        # next allocation: move the longest task (first in input order on ties)
        j = heap[0][1]
        old = alloc[j]
        new = _argmin_work(times[j], old)
        if new is None:
            break
        t_old, t_new = times[j][old], times[j][new]
        heapq.heapreplace(heap, (-t_new, j))
        q = groups[old]
        del q[bisect.bisect_left(q, (-t_old, j))]
        bisect.insort(groups[new], (-t_new, j))
        alloc[j] = new
        W += new * t_new - old * t_old
        k += 1
    return {"makespan": best, "alloc": best_alloc, "lists": best_lists, "index": best_index,
            "tried": tried, "pruned": pruned, "count": k + 1}


# ---------------------------------------------------------------------------
# Public API

def _check_problem(problem: Any) -> None:
    if not isinstance(problem, Problem):
        raise InstanceError(f"expected a mig.Problem, got {type(problem).__name__}", field="problem")


def _empty_plan(problem: Problem, data: _Data) -> FarPlan:
    sched = Schedule(problem.gpu, [], [], 0.0)
    tree = RepartitionTree(problem.gpu.name, [], 0.0)
    return FarPlan(problem, sched, tree, {}, 0.0, 0.0, {"allocations": 1, "allocations_tried": 0,
                                                         "allocations_pruned": 0, "allocation_index": 0,
                                                         "moves": 0, "swaps": 0, "iterations": 0, "p_ref": 0.0})


def _make_plan(data: _Data, alloc: Sequence[int], lists: list[list[int]], refine: bool,
               stats: dict[str, Any], phase2_makespan: float | None = None, **params: Any) -> FarPlan:
    stats.update(moves=0, swaps=0, iterations=0, moves_tried=0, swaps_tried=0)
    if phase2_makespan is None:
        phase2_makespan = _phase2_makespan(data, alloc, lists)
    ms2 = phase2_makespan
    final_lists, built = lists, None
    if refine and data.n > 1:
        from heuristics import far_refine

        # Algorithm 2 as written (slice ends updated by +- task times, exact
        # retiming at the end); if that exact retiming is not better, redo it
        # with an exact replay after every iteration, keeping the best lists.
        for exact in (False, True):
            new_lists, rstats = far_refine.refine(data, alloc, lists, exact=exact, **params)
            stats.update(rstats)
            if new_lists is not None:
                built = _build(data, alloc, new_lists)
                if built[2] < ms2:  # line 26's exact retiming decides; never accept a worse schedule
                    final_lists = new_lists
                    break
                built = None
            if not rstats["moves_tried"] and not rstats["swaps_tried"]:
                break
        if built is None:
            stats.update(moves=0, swaps=0)
    if built is None:
        built = _build(data, alloc, final_lists)
    sched, tree, ms = built
    stats["p_ref"] = (ms2 / ms - 1.0) * 100.0 if ms > 0 else 0.0
    names = data.names
    return FarPlan(data.problem, sched, tree, {names[j]: alloc[j] for j in range(data.n)}, ms2, ms, stats,
                   [[names[j] for j in lst] for lst in final_lists])


def _phase2_makespan(data: _Data, alloc: Sequence[int], lists: Sequence[Sequence[int]]) -> float:
    dur = [data.times[j][alloc[j]] for j in range(data.n)]
    return _replay(data.tree, lists, dur).makespan


def schedule_allocation(problem: Problem, allocation: Mapping[str, int], refine: bool = False,
                        **params: Any) -> FarPlan:
    """Phase 2 (Algorithm 1) for one given allocation (optionally refined).

    Parameters
    ----------
    problem
        A single batch.
    allocation
        ``{task name: size}`` for every task; each size must be one the task allows.
    refine
        Apply phase 3 afterwards (default: no, the plain Algorithm 1 result).

    Examples
    --------
    >>> from instances.mig import Problem, Task
    >>> p = Problem("A30", [Task("a", {1: 8.0, 2: 4.5, 4: 2.5}), Task("b", {1: 2.0, 2: 1.5, 4: 1.0})])
    >>> r = schedule_allocation(p.without_reconfiguration(), {"a": 2, "b": 2})
    >>> r.makespan
    4.5
    """
    _check_problem(problem)
    data = _Data(problem)
    if not isinstance(allocation, Mapping):
        raise InstanceError("allocation must map each task name to a size", field="allocation")
    alloc = []
    for name, tt in zip(data.names, data.times):
        if name not in allocation:
            raise InstanceError("missing from the allocation", task=name, field="allocation")
        s = allocation[name]
        if isinstance(s, bool) or not isinstance(s, int) or s not in tt:
            raise InstanceError(f"size {s!r} is not allowed (sizes {sorted(tt)})", task=name, field="allocation")
        alloc.append(s)
    extra = set(allocation) - set(data.names)
    if extra:
        raise InstanceError(f"unknown tasks {sorted(extra)}", field="allocation")
    if data.n == 0:
        return _empty_plan(problem, data)
    ms, lists = _phase2(data.tree, _groups(data, alloc), data.n)  # type: ignore[misc]
    stats = {"allocations": 1, "allocations_tried": 1, "allocations_pruned": 0, "allocation_index": 0}
    return _make_plan(data, alloc, lists, refine, stats, ms, **params)


def plan(problem: Problem | Workload, refine: bool = True, *, prune: bool = True, **params: Any):
    """FAR phases 1-3 for a batch (or Sec. 4 concatenation for a workload).

    Parameters
    ----------
    problem
        A :class:`~instances.mig.Problem`, or a :class:`~instances.mig.Workload`
        (then see :func:`heuristics.far_multibatch.plan_workload`; ``method`` =
        ``"move_swap"`` (default), ``"reversed"`` or ``"trivial"``).
    refine
        Run phase 3 (Algorithm 2).
    prune
        Skip allocations whose lower bound cannot beat the best so far (exact:
        the result is the same; ``False`` schedules every allocation).
    **params
        Refinement parameters: ``max_iterations`` (default 100),
        ``min_improvement`` (relative, default 0: any improvement continues).

    Returns
    -------
    FarPlan
        (or ``MultiBatchPlan`` for a workload).

    Examples
    --------
    >>> from instances import mig
    >>> p = plan(mig.generate(n=20, gpu="A30", seed=1))
    >>> sorted(p.stats)[:3]
    ['allocation_index', 'allocations', 'allocations_pruned']
    """
    if isinstance(problem, Workload):
        from heuristics import far_multibatch

        return far_multibatch.plan_workload(problem, refine=refine, **params)
    _check_problem(problem)
    t0 = time.perf_counter()
    data = _Data(problem)
    if data.n == 0:
        return _empty_plan(problem, data)
    found = _search(data, prune=prune)
    stats = {"allocations": found["count"], "allocations_tried": found["tried"],
             "allocations_pruned": found["pruned"], "allocation_index": found["index"]}
    result = _make_plan(data, found["alloc"], found["lists"], refine, stats, found["makespan"], **params)
    result.stats["seconds"] = time.perf_counter() - t0
    return result


def schedule(problem: Problem | Workload, refine: bool = True, **params: Any) -> Schedule:
    """FAR's schedule (feasible for :func:`instances.mig.check`).

    Examples
    --------
    >>> from instances import mig
    >>> problem = mig.generate(n=8, gpu="A30", seed=2)
    >>> mig.check(problem, schedule(problem))
    []
    """
    return plan(problem, refine=refine, **params).schedule


def phase2_bound(gpu: GPUSpec | str, work: float, h_max: float) -> float:
    """Sec. 5's bound on Algorithm 1's makespan without reconfiguration times.

    A30 (Sec. 5.1): ``W/4 + 3/4 h_max``. A100/H100 (Sec. 5.2):
    ``max(W/6 + 5/6 h_max, W/4, W/5 + 3/5 h_max)``.

    Examples
    --------
    >>> phase2_bound("A30", 8.0, 2.0)
    3.5
    """
    gpu = gpus.get(gpu)
    if gpu.num_slices == 4 and set(gpu.sizes) == {1, 2, 4}:
        return work / 4 + 0.75 * h_max
    if gpu.num_slices == 7 and set(gpu.sizes) == {1, 2, 3, 4, 7}:
        return max(work / 6 + 5 / 6 * h_max, work / 4, work / 5 + 0.6 * h_max)
    raise InstanceError(f"the seed proves no bound for {gpu.name}", field="gpu")


# ---------------------------------------------------------------------------
# Reading task files (JSON, or the reference implementation's style with times)

_SIZE_LINE = re.compile(r"^\s*size\s+(\d+)\s*:\s*([0-9.eE+-]+)\s*(seconds?|s)?\s*$", re.I)
_TASK_LINE = re.compile(r"^\s*task\s+(\S+?)\s*:\s*$", re.I)


def _parse_text(text: str, gpu: GPUSpec, source: str) -> Problem:
    """Plain-text task lists.

    Two styles are read:

    * the reference implementation's profile report::

        Task gaussian:
        Size 1: 10.5 seconds
        Size 2: 5.3 seconds

    * one task per line, ``name t(s_1) t(s_2) ...`` (one time per GPU size in
      increasing size order) or ``name 1:10.5 2:5.3 ...``; ``#`` starts a comment.
    """
    tasks: list[Task] = []
    current: tuple[str, dict[int, float]] | None = None
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line or set(line) <= set("=-"):
            continue
        where = f"line {lineno}"
        m = _TASK_LINE.match(line)
        if m:
            if current:
                tasks.append(Task(*current))
            current = (m.group(1), {})
            continue
        m = _SIZE_LINE.match(line)
        if m:
            if current is None:
                raise InstanceError("a 'Size s: t' line before any 'Task name:' line", source=source, field=where)
            try:
                current[1][int(m.group(1))] = float(m.group(2))
            except ValueError:
                raise InstanceError(f"{m.group(2)!r} is not a number", source=source, task=current[0],
                                    field=where) from None
            continue
        if line.lower().startswith("profiled times"):
            continue
        if current:
            tasks.append(Task(*current))
            current = None
        parts = line.replace(",", " ").split()
        name, vals = parts[0], parts[1:]
        times: dict[int, float] = {}
        try:
            if vals and all(":" in v or "=" in v for v in vals):
                for v in vals:
                    s, t = re.split("[:=]", v, maxsplit=1)
                    times[int(s)] = float(t)
            elif len(vals) == len(gpu.sizes):
                times = {s: float(v) for s, v in zip(gpu.sizes, vals)}
            else:
                raise InstanceError(f"expected {len(gpu.sizes)} times (sizes {list(gpu.sizes)}) or size:time "
                                    f"pairs, got {len(vals)} values", source=source, task=name, field=where)
        except ValueError as exc:
            if isinstance(exc, InstanceError):
                raise
            raise InstanceError(f"cannot read times {' '.join(vals)!r}", source=source, task=name,
                                field=where) from None
        tasks.append(Task(name, times))
    if current:
        tasks.append(Task(*current))
    if not tasks:
        raise InstanceError("no tasks found", source=source)
    return Problem(gpu, tasks, source=source)


def load_tasks(path: str | Path, gpu: str | None = None) -> Problem | Workload:
    """Read a problem: JSON (``instances.mig`` format) or a plain-text task list.

    ``gpu`` overrides the JSON's GPU and is required context for text files
    (default A100).
    """
    from instances import mig_problem

    src = str(path)
    text = read_text(path)
    stripped = text.lstrip()
    if stripped.startswith("{") or stripped.startswith("["):
        data = parse_json(text, src)
        if isinstance(data, list):  # a bare task list
            data = {"gpu": gpu or "A100", "tasks": data}
        elif isinstance(data, dict) and gpu is not None:
            data = dict(data, gpu=gpu)
        return mig_problem.from_dict(data, source=src)
    try:
        g = gpus.get(gpu or "A100")
    except InstanceError as exc:
        raise exc.located(src) from None
    return _parse_text(text, g, src)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m heuristics.far",
                                     description="FAR (seed 000): schedule a batch of tasks on a MIG GPU.")
    parser.add_argument("tasks", help="problem JSON, or a text task list (name t1 t2 ... / 'Task x:' 'Size s: t')")
    parser.add_argument("--gpu", help="GPU model (A30, A100, H100); overrides the file's")
    parser.add_argument("--no-refine", action="store_true", help="skip phase 3 (refinement)")
    parser.add_argument("--json", metavar="OUT", help="write the schedule JSON here")
    parser.add_argument("--plot", metavar="PNG", help="write a Gantt chart here")
    parser.add_argument("--method", default="move_swap", choices=["move_swap", "reversed", "trivial"],
                        help="multi-batch concatenation (Sec. 4) for a workload file")
    args = parser.parse_args(argv)
    if args.gpu is not None:
        try:
            gpus.get(args.gpu)
        except InstanceError as exc:
            parser.error(str(exc))
    try:
        problem = load_tasks(args.tasks, args.gpu)
    except InstanceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if isinstance(problem, Workload):
        result = plan(problem, refine=not args.no_refine, method=args.method)
    else:
        result = plan(problem, refine=not args.no_refine)
    print(result.tree)
    st = result.stats
    if isinstance(problem, Workload):
        print(f"Makespan: {result.makespan:.6g} s ({len(problem.batches)} batches, method {args.method}, "
              f"moves {st.get('moves', 0)}, swaps {st.get('swaps', 0)})")
    else:
        print(f"Phase-2 makespan: {result.phase2_makespan:.6g} s; makespan: {result.makespan:.6g} s "
              f"(allocations {st['allocations']}, scheduled {st['allocations_tried']}, "
              f"moves {st['moves']}, swaps {st['swaps']})")
    from instances import mig_check

    violations = mig_check.check(problem, result.schedule)
    if violations:  # never expected; say so loudly rather than write a bad file
        print("internal error: infeasible schedule:\n" + "\n".join(violations), file=sys.stderr)
        return 1
    if args.json:
        result.schedule.save(args.json)
        print(f"wrote {args.json}")
    if args.plot:
        from instances.mig_plot import save_gantt

        save_gantt(result.schedule, problem.gpu, args.plot)
        print(f"wrote {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
