"""FAR for one batch: phases 1-2 (family of allocations, Algorithm 1) and the plan it reports.

The third module of FAR's chain (``far_tree`` <- ``far_refine`` <- ``far_batch``
<- ``far_multibatch`` <- ``far``); most callers use :mod:`heuristics.far`,
which re-exports the public names.

1. **Phase 1** (FAR paper, Sec. 3.1, after Turek et al.): a family of
   allocations (a size per task). The first gives every task the smallest
   size minimising its work ``s * t(s)``; each next one moves the currently
   longest task to the work-minimising size among the larger ones; the family
   ends when the longest task cannot grow. See :func:`family`.
2. **Phase 2** (Algorithm 1, Sec. 3.2): list scheduling of one allocation on
   the repartitioning tree (Figure 4, :class:`heuristics.far_tree.Tree`), with
   a min-heap of instances by end time, LPT order within each size and
   create/destroy operations serialised through the global ``reconfig_end``.
   The best allocation of the family wins. See :func:`schedule_allocation`.
3. **Phase 3** (Algorithm 2, Sec. 3.3): refinement of the winner's node task
   lists by :func:`heuristics.far_refine.refine`, re-timed exactly by
   :func:`heuristics.far_tree.replay`.

Deterministic tie-breaking (the paper leaves it open):

* phase 1: on equal work the smaller size wins; on equal longest times the
  task that comes first in the input is moved;
* phase 2: LPT ties go to the task that comes first in the input; heap ties
  (equal end times) go to the node that comes first in the BFS order of the
  repartitioning tree (``gpu.placements``);
* among allocations with the same phase-2 makespan the first in the family wins.

Speed: an allocation whose lower bound ``max(h_max, W / slices)`` is not below
the best makespan so far cannot win and is skipped; since ``W`` never
decreases along the family (each move goes to a size whose work was already
>= the current one), the scan stops for good once ``W / slices`` reaches the
best makespan. Consecutive allocations differ in one task, so the LPT lists
per size are updated by one ordered removal and one ordered insertion instead
of a re-sort, and a phase-2 simulation aborts as soon as a task ends at or
after the best makespan.

Examples
--------
>>> from instances import mig
>>> problem = mig.generate(n=12, gpu="A100", seed=0)
>>> p = plan(problem)
>>> mig.check(problem, p.schedule)
[]
>>> p.makespan <= p.phase2_makespan
True
"""

from __future__ import annotations

import bisect
import heapq
import math
import numbers
import time
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, Sequence

from heuristics import far_refine
from heuristics.far_tree import Tree, Timing, check_scale, replay, to_schedule
from instances import options
from instances.errors import InstanceError, OptionError
from instances.gpus import Placement
from instances.mig_problem import Problem
from instances.mig_schedule import Schedule

__all__ = ["FarPlan", "RepartitionTree", "TreeNode", "family", "schedule_allocation", "plan", "check_options"]

_INF = math.inf


# ---------------------------------------------------------------------------
# Problem data as plain lists (the hot loops avoid attribute and dict lookups)

class _Data:
    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.gpu = problem.gpu
        self.tree = Tree(problem.gpu)
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
    _check_problem(problem)
    data = _Data(problem)
    return [dict(zip(data.names, alloc)) for alloc in _allocations(data)]


# ---------------------------------------------------------------------------
# Phase 2: Algorithm 1

def _phase2(tree: Tree, groups: Mapping[int, list[tuple[float, int]]], n: int,
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
    node_tasks
        Task names per node of the repartitioning tree, in the node numbering
        of :class:`heuristics.far_tree.Tree` (a starting point for other
        heuristics built on :mod:`heuristics.far_tree`).
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


def _build(data: _Data, alloc: Sequence[int], node_tasks: Sequence[Sequence[int]],
           origin: float = 0.0) -> tuple[Schedule, RepartitionTree, float]:
    """Schedule and tree report from fixed node task lists."""
    tree = data.tree
    dur = _durations(data, alloc)
    tm = replay(tree, node_tasks, dur, origin)
    sched = to_schedule(tree, node_tasks, dur, data.names, tm)
    return sched, _report(data, node_tasks, tm), tm.makespan


def _report(data: _Data, node_tasks: Sequence[Sequence[int]], tm: Timing) -> RepartitionTree:
    tree = data.tree
    pl = tree.placements
    nodes: list[TreeNode] = []

    def dfs(v: int) -> None:
        rows = [(data.names[j], tm.start[j], tm.end[j]) for j in node_tasks[v]]
        nodes.append(TreeNode(pl[v], rows, tm.create[v], tm.destroy[v], tree.depth[v]))
        for c in tree.children[v]:
            dfs(c)

    dfs(0)
    return RepartitionTree(data.gpu.name, nodes, tm.makespan)


def _durations(data: _Data, alloc: Sequence[int]) -> list[float]:
    return [data.times[j][alloc[j]] for j in range(data.n)]


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

def check_options(refine: Any = True, prune: Any = True, max_iterations: Any = 100,
                  min_improvement: Any = 0.0) -> None:
    """Raise :class:`~instances.errors.OptionError` for a bad value of FAR's options.

    Examples
    --------
    >>> check_options(max_iterations=-1)
    Traceback (most recent call last):
    ...
    instances.errors.OptionError: max_iterations must be >= 0, got -1
    """
    options.flag(refine, "refine")
    options.flag(prune, "prune")
    if isinstance(max_iterations, bool) or not isinstance(max_iterations, numbers.Integral):
        raise OptionError(f"max_iterations must be an integer, got {max_iterations!r}")
    if max_iterations < 0:
        raise OptionError(f"max_iterations must be >= 0, got {max_iterations!r}")
    if (isinstance(min_improvement, bool) or not isinstance(min_improvement, numbers.Real)
            or not 0.0 <= min_improvement < 1.0):
        raise OptionError(f"min_improvement must lie in [0, 1), got {min_improvement!r}")


def _check_problem(problem: Any) -> None:
    if not isinstance(problem, Problem):
        raise InstanceError(f"expected a mig.Problem, got {type(problem).__name__}", field="problem")
    check_scale(problem)


def _empty_plan(problem: Problem, data: _Data) -> FarPlan:
    sched = Schedule(problem.gpu, [], [], 0.0)
    tree = RepartitionTree(problem.gpu.name, [], 0.0)
    return FarPlan(problem, sched, tree, {}, 0.0, 0.0, {"allocations": 1, "allocations_tried": 0,
                                                         "allocations_pruned": 0, "allocation_index": 0,
                                                         "moves": 0, "swaps": 0, "iterations": 0, "p_ref": 0.0})


def _make_plan(data: _Data, alloc: Sequence[int], lists: list[list[int]], refine: bool,
               stats: dict[str, Any], phase2_makespan: float | None = None, *, max_iterations: int = 100,
               min_improvement: float = 0.0) -> FarPlan:
    stats.update(moves=0, swaps=0, iterations=0, moves_tried=0, swaps_tried=0)
    if phase2_makespan is None:
        phase2_makespan = replay(data.tree, lists, _durations(data, alloc)).makespan
    ms2 = phase2_makespan
    final_lists, built = lists, None
    if refine and data.n > 1:
        dur = _durations(data, alloc)
        # Algorithm 2 as written (slice ends updated by +- task times, exact
        # retiming at the end); if that exact retiming is not better, redo it
        # with an exact replay after every iteration, keeping the best lists.
        for exact in (False, True):
            new_lists, rstats = far_refine.refine(data.tree, dur, lists, exact=exact, max_iterations=max_iterations,
                                                  min_improvement=min_improvement)
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
    release = data.problem.release
    if release:
        # FAR plans a batch from time 0 (its decisions do not depend on the
        # release); the GPU is free from the release, so the lists are timed from there
        ms2 = replay(data.tree, lists, _durations(data, alloc), release).makespan
        sched, tree, ms = _build(data, alloc, final_lists, release)
    names = data.names
    return FarPlan(data.problem, sched, tree, {names[j]: alloc[j] for j in range(data.n)}, ms2, ms, stats,
                   [[names[j] for j in lst] for lst in final_lists])


def schedule_allocation(problem: Problem, allocation: Mapping[str, int], refine: bool = False, *,
                        max_iterations: int = 100, min_improvement: float = 0.0, **unknown: Any) -> FarPlan:
    """Phase 2 (Algorithm 1) for one given allocation (optionally refined).

    Parameters
    ----------
    problem
        A single batch.
    allocation
        ``{task name: size}`` for every task; each size must be one the task allows.
    refine
        Apply phase 3 afterwards (default: no, the plain Algorithm 1 result).
    max_iterations, min_improvement
        Refinement stop rules (see :func:`plan`).

    Raises
    ------
    InstanceError
        For a bad allocation; :class:`~instances.errors.OptionError` for a bad
        or unknown option.

    Examples
    --------
    >>> from instances.mig import Problem, Task
    >>> p = Problem("A30", [Task("a", {1: 8.0, 2: 4.5, 4: 2.5}), Task("b", {1: 2.0, 2: 1.5, 4: 1.0})])
    >>> r = schedule_allocation(p.without_reconfiguration(), {"a": 2, "b": 2})
    >>> r.makespan
    4.5
    """
    options.no_unknown(unknown, "far.schedule_allocation")
    check_options(refine, True, max_iterations, min_improvement)
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
    return _make_plan(data, alloc, lists, refine, stats, ms, max_iterations=max_iterations,
                      min_improvement=min_improvement)


def plan(problem: Problem, refine: bool = True, *, prune: bool = True, max_iterations: int = 100,
         min_improvement: float = 0.0, **unknown: Any) -> FarPlan:
    """FAR phases 1-3 for one batch.

    Parameters
    ----------
    problem
        A single batch (:class:`~instances.mig.Problem`); for a workload use
        :func:`heuristics.far.plan`. A batch with a release is planned as if
        released at 0 and timed from its release (the GPU is empty until then).
    refine
        Run phase 3 (Algorithm 2).
    prune
        Skip allocations whose lower bound cannot beat the best so far (exact:
        the result is the same; ``False`` schedules every allocation).
    max_iterations, min_improvement
        Refinement stop rules: at most ``max_iterations`` iterations (default
        100); stop when an iteration improves the makespan by less than the
        relative ``min_improvement`` (default 0: any improvement continues).

    Returns
    -------
    FarPlan

    Raises
    ------
    InstanceError
        When ``problem`` is not a problem, or its times are too large to sum
        (:func:`heuristics.far_tree.check_scale`);
        :class:`~instances.errors.OptionError` for a bad or unknown option.

    Examples
    --------
    >>> from instances import mig
    >>> p = plan(mig.generate(n=20, gpu="A30", seed=1))
    >>> sorted(p.stats)[:3]
    ['allocation_index', 'allocations', 'allocations_pruned']
    """
    options.no_unknown(unknown, "far_batch.plan")
    check_options(refine, prune, max_iterations, min_improvement)
    _check_problem(problem)
    t0 = time.perf_counter()
    data = _Data(problem)
    if data.n == 0:
        return _empty_plan(problem, data)
    found = _search(data, prune=prune)
    stats = {"allocations": found["count"], "allocations_tried": found["tried"],
             "allocations_pruned": found["pruned"], "allocation_index": found["index"]}
    result = _make_plan(data, found["alloc"], found["lists"], refine, stats, found["makespan"],
                        max_iterations=max_iterations, min_improvement=min_improvement)
    result.stats["seconds"] = time.perf_counter() - t0
    return result
