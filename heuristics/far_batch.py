"""FAR for one batch: phases 1-2 (family of allocations, Algorithm 1) and the plan it reports.

Part of FAR's chain of modules (listed in :mod:`heuristics.far`), after
``far_phase2`` and ``far_report``; most callers use :mod:`heuristics.far`,
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

Deterministic tie-breaking (the paper leaves it open), ``ties="ours"`` (default):

* phase 1: on equal work the smaller size wins; on equal longest times the
  task that comes first in the input is moved;
* phase 2: LPT ties go to the task that comes first in the input; heap ties
  (equal end times) go to the node that comes first in the BFS order of the
  repartitioning tree (``gpu.placements``);
* among allocations with the same phase-2 makespan the first in the family wins.

``ties="reference"`` follows the FAR authors' C++ implementation
(artecs-group/FAR_MIG_scheduler) instead, so that phases 1+2 give its
makespans bit for bit:

* phase 1 keeps the first strict minimum of ``s * t(s)`` in the order its
  ``std::unordered_map`` of times is iterated, which with libstdc++ is the
  largest size first (7, 4, 3, 2, 1 on an A100/H100; 4, 2, 1 on an A30):
  equal work goes to the *larger* size;
* phase 2's heap is libstdc++'s ``std::priority_queue`` ordered by end time
  alone (:func:`heuristics.far_tree.std_heap_pop`), fed in the authors'
  order: the root, a node again after each of its tasks, a split node's
  children left to right (the order of ``gpu.placements``), which is the
  order of the loop below.

Two of their orders are kept as ours because no makespan depends on them in
the instances we generate: LPT ties among equal durations of one size
(``std::sort`` is not stable, but equal durations give equal times), and equal
longest times of different tasks in phase 1 (their order is that of task
addresses in a hash set). ``ties="best"`` plans with both rules and keeps
the plan with the smaller makespan (``"ours"`` on equal makespans).

Speed: an allocation whose lower bound ``max(h_max, W / slices)`` is not below
the best makespan so far cannot win and is skipped; since ``W`` never
decreases along the family (each move goes to a size whose work was already
>= the current one), the scan stops for good once ``W / slices`` reaches the
best makespan. A second, sharper bound (:class:`heuristics.far_phase2.Bound`)
follows phase 2's structure. Consecutive allocations differ in one task, so
the LPT lists per size are updated by one ordered removal and one ordered
insertion instead of a re-sort, and a phase-2 simulation aborts as soon as a
task ends at or after the best makespan. The simulations of the scan use the
run-length form (:func:`heuristics.far_phase2.runs_makespan`); the winner is
then re-simulated task by task (:func:`heuristics.far_phase2.simulate`) for
its lists.

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
from typing import Any, Iterator, Mapping, Sequence

from heuristics import far_refine
from heuristics.far_phase2 import Bound, runs_makespan, simulate
from heuristics.far_report import FarPlan, RepartitionTree, TreeNode
from heuristics.far_tree import TIES, Tree, Timing, replay, to_schedule
from instances import options
from instances.errors import InstanceError, OptionError
from instances.mig_problem import Problem, check_scale
from instances.mig_schedule import Schedule

__all__ = ["FarPlan", "RepartitionTree", "TreeNode", "family", "schedule_allocation", "plan", "check_options",
           "TIE_RULES"]

#: Values of the ``ties`` option of :func:`plan`: the two rules of
#: :data:`heuristics.far_tree.TIES` and ``"best"`` (plan with both, keep the better).
TIE_RULES = (*TIES, "best")

_INF = math.inf


# ---------------------------------------------------------------------------
# Problem data as plain lists (the hot loops avoid attribute and dict lookups)

class _Data:
    def __init__(self, problem: Problem, ties: str = "ours") -> None:
        self.problem = problem
        self.ties = ties
        self.larger = ties == "reference"  # phase 1: equal work goes to the larger size
        self.gpu = problem.gpu
        self.tree = Tree(problem.gpu)
        self.names = [t.name for t in problem.tasks]
        self.n = len(self.names)
        self.times: list[dict[int, float]] = [dict(t.times) for t in problem.tasks]
        # Phase 1: a^1 per task; larger sizes are looked up lazily (few tasks ever move)
        self.first: list[int] = [_argmin_work(tt, 0, self.larger) for tt in self.times]  # type: ignore[misc]


def _argmin_work(tt: Mapping[int, float], above: int, larger: bool = False) -> int | None:
    """Size > ``above`` minimising s * t(s); on equal work the smaller size (``larger``: the larger one)."""
    best = None
    best_w = _INF
    for s, t in tt.items():
        if s > above:
            w = s * t
            if w < best_w or (w == best_w and (s > best if larger else s < best)):  # type: ignore[operator]
                best, best_w = s, w
    return best


def _check_ties(ties: Any, allow_best: bool = True) -> None:
    options.choice(ties, TIE_RULES if allow_best else TIES, "ties")


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
        new = _argmin_work(times[j], old, data.larger)
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


@options.known_options
def family(problem: Problem, ties: str = "ours") -> list[dict[str, int]]:
    """Phase 1 (Sec. 3.1): the family of allocations, each ``{task name: size}``.

    Parameters
    ----------
    problem
        A single batch.
    ties
        ``"ours"`` or ``"reference"`` (the FAR authors' rule: equal work goes
        to the larger size; see the module docstring).

    Returns
    -------
    list of dict
        ``a^1, a^2, ...``: ``a^1`` gives each task the smallest size minimising
        ``s * t(s)``; ``a^{k+1}`` moves the longest task of ``a^k`` (first in
        input order on ties) to the work-minimising size among the larger ones
        (smaller size on ties, the larger with ``"reference"``); the family
        ends when the longest task cannot grow.

    Examples
    --------
    >>> from instances.mig import Problem, Task
    >>> p = Problem("A30", [Task("a", {1: 8.0, 2: 4.5, 4: 2.5}), Task("b", {1: 2.0, 2: 1.5, 4: 1.0})])
    >>> family(p)
    [{'a': 1, 'b': 1}, {'a': 2, 'b': 1}, {'a': 4, 'b': 1}]
    >>> q = Problem("A30", [Task("a", {1: 4.0, 2: 2.0, 4: 1.5})])
    >>> family(q), family(q, ties="reference")
    ([{'a': 1}, {'a': 2}, {'a': 4}], [{'a': 2}, {'a': 4}])
    """
    _check_ties(ties, allow_best=False)
    _check_problem(problem)
    data = _Data(problem, ties)
    return [dict(zip(data.names, alloc)) for alloc in _allocations(data)]


# ---------------------------------------------------------------------------
# Phases 1+2: the scan of the family

def _build(data: _Data, alloc: Sequence[int], node_tasks: Sequence[Sequence[int]],
           origin: float = 0.0) -> tuple[Schedule, RepartitionTree, float]:
    """Schedule and tree report from fixed node task lists."""
    tree = data.tree
    dur = _durations(data, alloc)
    tm = replay(tree, node_tasks, dur, origin, ties=data.ties)
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
    of current times also gives h_max, and the LPT lists per size (and their
    run-length form) are updated by one removal and one insertion per step.
    With ``prune`` an allocation is simulated only when neither ``h_max``, nor
    ``W / slices``, nor :class:`~heuristics.far_phase2.Bound` reaches the best
    makespan so far; the simulations use
    :func:`~heuristics.far_phase2.runs_makespan` (rule ``"ours"``) or
    :func:`~heuristics.far_phase2.simulate` (``"reference"``), and the winner
    is simulated once more for its lists.
    """
    tree = data.tree
    n = data.n
    S = float(tree.num_slices)
    times = data.times
    larger = data.larger
    fast = data.ties == "ours"
    alloc = list(data.first)
    groups = _groups(data, alloc)
    heap = [(-times[j][alloc[j]], j) for j in range(n)]
    heapq.heapify(heap)
    W = math.fsum(alloc[j] * times[j][alloc[j]] for j in range(n))
    top = max(tree.size) + 1
    work = {s: math.fsum(-negt for negt, _ in q) for s, q in groups.items()}
    count = {s: len(q) for s, q in groups.items()}
    rkeys: list[list[float]] = [[] for _ in range(top)]
    rcount: list[dict[float, int]] = [{} for _ in range(top)]
    for s, q in groups.items():
        for negt, _ in q:
            if negt in rcount[s]:
                rcount[s][negt] += 1
            else:
                rcount[s][negt] = 1
                rkeys[s].append(negt)
    bound = Bound(tree)
    best = _INF
    best_alloc: list[int] = list(alloc)
    best_index = 0
    tried = pruned = 0
    k = 0
    while True:
        h = -heap[0][0]
        if prune and W / S * (1 - 1e-9) >= best:
            break  # W never decreases along the family: nothing later can win
        if prune and (h >= best or bound(work, count, {s: -q[0][0] for s, q in groups.items() if q})
                      * (1 - 1e-9) >= best):
            pruned += 1
        else:
            tried += 1
            cap = best if prune else _INF
            if fast:
                ms = runs_makespan(tree, [[-x for x in keys] for keys in rkeys],
                               [[rcount[s][x] for x in keys] for s, keys in enumerate(rkeys)], n, cap)
            else:
                res = simulate(tree, groups, n, cap, data.ties)
                ms = None if res is None else res[0]
            if ms is not None and ms < best:
                best = ms
                best_alloc = list(alloc)
                best_index = k
        # next allocation: move the longest task (first in input order on ties)
        j = heap[0][1]
        old = alloc[j]
        new = _argmin_work(times[j], old, larger)
        if new is None:
            break
        t_old, t_new = times[j][old], times[j][new]
        heapq.heapreplace(heap, (-t_new, j))
        q = groups[old]
        del q[bisect.bisect_left(q, (-t_old, j))]
        bisect.insort(groups[new], (-t_new, j))
        for s, negt, step in ((old, -t_old, -1), (new, -t_new, 1)):
            c = rcount[s].get(negt, 0) + step
            if c:
                if step > 0 and c == 1:
                    bisect.insort(rkeys[s], negt)
                rcount[s][negt] = c
            else:
                del rcount[s][negt]
                del rkeys[s][bisect.bisect_left(rkeys[s], negt)]
        work[old] -= t_old
        work[new] += t_new
        count[old] -= 1
        count[new] += 1
        alloc[j] = new
        W += new * t_new - old * t_old
        k += 1
    res = simulate(tree, _groups(data, best_alloc), n, _INF, data.ties)
    assert res is not None and res[0] == best, (res and res[0], best)
    return {"makespan": best, "alloc": best_alloc, "lists": res[1], "index": best_index,
            "tried": tried, "pruned": pruned, "count": k + 1}


# ---------------------------------------------------------------------------
# Public API

@options.known_options
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
                                                         "moves": 0, "swaps": 0, "iterations": 0, "p_ref": 0.0,
                                                         "ties": data.ties})


def _make_plan(data: _Data, alloc: Sequence[int], lists: list[list[int]], refine: bool,
               stats: dict[str, Any], phase2_makespan: float | None = None, *, max_iterations: int = 100,
               min_improvement: float = 0.0) -> FarPlan:
    stats.update(moves=0, swaps=0, iterations=0, moves_tried=0, swaps_tried=0)
    if phase2_makespan is None:
        phase2_makespan = replay(data.tree, lists, _durations(data, alloc), ties=data.ties).makespan
    ms2 = phase2_makespan
    final_lists, built = lists, None
    if refine and data.n > 1:
        dur = _durations(data, alloc)
        # Algorithm 2 as written (slice ends updated by +- task times, exact
        # retiming at the end); if that exact retiming is not better, redo it
        # with an exact replay after every iteration, keeping the best lists.
        for exact in (False, True):
            new_lists, rstats = far_refine.refine(data.tree, dur, lists, exact=exact, max_iterations=max_iterations,
                                                  min_improvement=min_improvement, ties=data.ties)
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
        ms2 = replay(data.tree, lists, _durations(data, alloc), release, ties=data.ties).makespan
        sched, tree, ms = _build(data, alloc, final_lists, release)
    names = data.names
    return FarPlan(data.problem, sched, tree, {names[j]: alloc[j] for j in range(data.n)}, ms2, ms, stats,
                   [[names[j] for j in lst] for lst in final_lists])


@options.typed
def schedule_allocation(problem: Problem, allocation: Mapping[str, int], refine: bool = False, *,
                        max_iterations: int = 100, min_improvement: float = 0.0, ties: str = "ours",
                        **unknown: Any) -> FarPlan:
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
    ties
        Heap rule for equal end times, ``"ours"`` or ``"reference"`` (see :func:`plan`).

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
    _check_ties(ties, allow_best=False)
    _check_problem(problem)
    data = _Data(problem, ties)
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
    ms, lists = simulate(data.tree, _groups(data, alloc), data.n, _INF, ties)  # type: ignore[misc]
    stats = {"allocations": 1, "allocations_tried": 1, "allocations_pruned": 0, "allocation_index": 0}
    return _make_plan(data, alloc, lists, refine, stats, ms, max_iterations=max_iterations,
                      min_improvement=min_improvement)


@options.typed
def plan(problem: Problem, refine: bool = True, *, prune: bool = True, max_iterations: int = 100,
         min_improvement: float = 0.0, ties: str = "ours", **unknown: Any) -> FarPlan:
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
    ties
        Tie rules of phases 1+2 (:data:`TIE_RULES`): ``"ours"`` (default, the
        module docstring's deterministic rules), ``"reference"`` (the FAR
        authors' C++ implementation, bit for bit), or ``"best"`` (plan with
        both, keep the smaller makespan; ``stats["ties"]`` says which won).

    Returns
    -------
    FarPlan

    Raises
    ------
    InstanceError
        When ``problem`` is not a problem, or its times are too large to sum
        (:func:`instances.mig_problem.check_scale`);
        :class:`~instances.errors.OptionError` for a bad or unknown option.

    Examples
    --------
    >>> from instances import mig
    >>> p = plan(mig.generate(n=20, gpu="A30", seed=1))
    >>> sorted(p.stats)[:3]
    ['allocation_index', 'allocations', 'allocations_pruned']
    >>> b = plan(mig.generate(n=20, gpu="A30", seed=1), ties="best")
    >>> b.makespan <= min(p.makespan, plan(b.problem, ties="reference").makespan), b.stats["ties"] in TIES
    (True, True)
    """
    options.no_unknown(unknown, "far_batch.plan")
    check_options(refine, prune, max_iterations, min_improvement)
    _check_ties(ties)
    _check_problem(problem)
    if ties == "best":
        t0 = time.perf_counter()
        plans = [plan(problem, refine, prune=prune, max_iterations=max_iterations, min_improvement=min_improvement,
                      ties=rule) for rule in TIES]
        # "ours" first: it is kept on equal makespans
        result = min(plans, key=lambda fp: fp.makespan)
        result.stats["seconds"] = time.perf_counter() - t0
        return result
    t0 = time.perf_counter()
    data = _Data(problem, ties)
    if data.n == 0:
        return _empty_plan(problem, data)
    found = _search(data, prune=prune)
    stats = {"allocations": found["count"], "allocations_tried": found["tried"],
             "allocations_pruned": found["pruned"], "allocation_index": found["index"]}
    result = _make_plan(data, found["alloc"], found["lists"], refine, stats, found["makespan"],
                        max_iterations=max_iterations, min_improvement=min_improvement)
    result.stats["ties"] = ties
    result.stats["seconds"] = time.perf_counter() - t0
    return result
