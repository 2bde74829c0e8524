"""FAR on a node of g identical MIG GPUs (FAR paper, Sec. 3.2 last paragraph, Sec. 5.1).

The paper: "the method can be used seamlessly for multiple A30s and multiple
A100/H100s; for that, there would be as many trees as GPUs, and initially,
there is one node for the root of each tree to start repartitioning on."
Read literally, that is:

1. **Phase 1** (Sec. 3.1) is unchanged: the family of allocations depends on
   the tasks and the GPU model's sizes only (:func:`heuristics.far.family`).
2. **Phase 2** (Algorithm 1) runs with g repartitioning trees and *one*
   min-heap of instances by end time that starts with the g roots. Whichever
   instance of whichever GPU ends first takes the longest unscheduled task of
   its size, or splits when none is left; so tasks are distributed between
   GPUs by list scheduling, not by a fixed split. Each GPU has its own
   ``reconfig_end`` (its own create/destroy channel, the reading of
   :mod:`instances.mig_node`). The best allocation of the family wins. Ties
   of equal end times go to the lower GPU index, then to the node that comes
   first in the tree's breadth-first order; with g = 1 this is exactly
   :func:`heuristics.far.plan`'s phase 2.
3. **Phase 3** (Algorithm 2) on the forest of g trees: the alternative
   instance of a critical instance is any other instance of the same size, on
   any GPU (so a task may move to another GPU); the walk from a critical leaf
   towards the root stops at a GPU's root only when no move or swap to
   another GPU's root is possible. The result is re-timed exactly per GPU
   (:func:`heuristics.far_tree.replay`) and kept only if it is better.

Sec. 5.1's argument applies unchanged with ``4g`` slices: on g A30s phase 2
leaves no slice idle before the critical task starts, so with Theorem 1 the
makespan (reconfiguration times not counted) is at most ``(8g - 1) / (4g)``
times the optimum.

Examples
--------
>>> from instances import mig_node
>>> from heuristics import far_node
>>> problem = mig_node.generate(10, "A30", gpus=2, seed=0)
>>> p = far_node.plan(problem)
>>> mig_node.check(problem, p.schedule), p.makespan <= p.phase2_makespan
([], True)
"""

from __future__ import annotations

import bisect
import heapq
import math
import numbers
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from heuristics import far
from heuristics.far_refine import pick_move, pick_swap
from heuristics.far_tree import Timing, Tree, replay, to_schedule
from instances import options
from instances.errors import InstanceError, OptionError
from instances.mig_node import NodeProblem, NodeSchedule
from instances.mig_problem import check_scale

__all__ = ["NodePlan", "plan", "schedule", "METHODS"]

_INF = math.inf


@dataclass
class NodePlan:
    """A FAR result for a node.

    Attributes
    ----------
    schedule
        The final node schedule (it passes :func:`instances.mig_node.check`).
    allocation
        ``{task name: size}`` of the winning allocation.
    assignment
        ``{task name: gpu index}``.
    phase2_makespan, makespan
        Makespan after phase 2 and the final one.
    stats
        ``allocations`` (family size), ``allocations_tried`` (phase-2 runs),
        ``allocations_pruned``, ``allocation_index``, ``moves``, ``swaps``,
        ``iterations``, ``moves_between_gpus``, ``seconds``.
    node_tasks
        Per GPU, the task names of every node of :class:`heuristics.far_tree.Tree`.
    """

    problem: NodeProblem
    schedule: NodeSchedule
    allocation: dict[str, int]
    assignment: dict[str, int]
    phase2_makespan: float
    makespan: float
    stats: dict[str, Any] = field(default_factory=dict)
    node_tasks: list[list[list[str]]] = field(default_factory=list, repr=False)


# ---------------------------------------------------------------------------
# Phase 2: Algorithm 1 with one tree per GPU and one heap

def _phase2(tree: Tree, g: int, alloc: Sequence[int], times: Sequence[dict[int, float]],
            best: float = _INF) -> tuple[float, list[list[list[int]]]] | None:
    """Algorithm 1 on g trees; the makespan and per GPU the node task lists, ``None`` once a task ends at ``best``."""
    size, children, tc, td = tree.size, tree.children, tree.tc, tree.td
    groups: dict[int, list[tuple[float, int]]] = {s: [] for s in tree.same_size}
    for j, s in enumerate(alloc):
        groups[s].append((-times[j][s], j))  # LPT, ties by input order
    for q in groups.values():
        q.sort()
    ptr = dict.fromkeys(groups, 0)
    lists: list[list[list[int]]] = [[[] for _ in range(tree.n)] for _ in range(g)]
    heap = [(0.0, k, 0) for k in range(g)]
    reconfig_end = [0.0] * g
    remaining = len(alloc)
    makespan = 0.0
    while heap:
        end, k, v = heapq.heappop(heap)
        s = size[v]
        q = groups[s]
        if ptr[s] < len(q):
            mine = lists[k][v]
            if not mine:  # give time for the instance's creation (lines 11-14), on this GPU's channel
                if end > reconfig_end[k]:
                    reconfig_end[k] = end
                reconfig_end[k] += tc[v]
                end = reconfig_end[k]
            negt, j = q[ptr[s]]
            ptr[s] += 1
            mine.append(j)
            end = end - negt
            if end >= best:
                return None
            if end > makespan:
                makespan = end
            remaining -= 1
            heapq.heappush(heap, (end, k, v))
        elif remaining:
            if lists[k][v]:  # give time to destroy it (lines 26-28)
                if end > reconfig_end[k]:
                    reconfig_end[k] = end
                reconfig_end[k] += td[v]
            for c in children[v]:
                heapq.heappush(heap, (end, k, c))
    return makespan, lists


def _timing(tree: Tree, lists: Sequence[Sequence[Sequence[int]]],
            durations: Sequence[float]) -> tuple[list[Timing], float]:
    """Exact times of fixed node task lists, GPU by GPU (each GPU has its own channel)."""
    tms = [replay(tree, gl, durations) for gl in lists]
    return tms, max(tm.makespan for tm in tms)


# ---------------------------------------------------------------------------
# Phase 3: Algorithm 2 on the forest of g trees

def _refine(tree: Tree, g: int, dur: Sequence[float], lists: Sequence[Sequence[Sequence[int]]], *,
            max_iterations: int, min_improvement: float,
            exact: bool) -> tuple[list[list[list[int]]] | None, dict[str, int]]:
    """Algorithm 2 with alternatives on every GPU (see the module docstring); the best lists or ``None``.

    Node ``u`` of the forest is node ``u % N`` of GPU ``u // N`` (``N`` nodes
    per tree); slice ``k * S + s`` is slice ``s`` of GPU ``k``.
    """
    N, S = tree.n, tree.num_slices
    keys = [sorted((-dur[j], j) for j in lists[k][v]) for k in range(g) for v in range(N)]
    size = [tree.size[u % N] for u in range(g * N)]
    slices = [[(u // N) * S + s for s in tree.slices[u % N]] for u in range(g * N)]
    parent = [-1 if tree.parent[u % N] < 0 else (u // N) * N + tree.parent[u % N] for u in range(g * N)]
    leaves = [k * N + v for k in range(g) for v in tree.leaves]
    same_size = {s: [k * N + v for k in range(g) for v in vs] for s, vs in tree.same_size.items()}

    def as_lists() -> list[list[list[int]]]:
        return [[[j for _, j in keys[k * N + v]] for v in range(N)] for k in range(g)]

    tms, omega = _timing(tree, as_lists(), dur)
    best, best_lists = omega, None
    moves = swaps = across = 0
    stats = {"moves": 0, "swaps": 0, "moves_tried": 0, "swaps_tried": 0, "iterations": 0, "moves_between_gpus": 0}
    slice_end = [0.0] * (g * S)
    for it in range(max_iterations):
        if exact or it == 0:
            slice_end = [0.0] * (g * S)
            for u in range(g * N):
                if keys[u]:
                    e = tms[u // N].node_end[u % N]
                    for s in slices[u]:
                        slice_end[s] = max(slice_end[s], e)
        tol = 1e-9 * max(1.0, omega)
        queue = deque(u for u in leaves if any(slice_end[s] >= omega - tol for s in slices[u]))
        visited = set(queue)
        stop = changed = False
        while queue:
            node = queue.popleft()
            done = False
            alts = [u for u in same_size[size[node]] if u != node]
            if alts and keys[node]:
                ends = {u: max(slice_end[s] for s in slices[u]) for u in alts}
                alt = min(alts, key=lambda u: (ends[u], u))
                margin = omega - ends[alt]
                if margin > tol:
                    c = pick_move(keys[node], margin)
                    if c is not None:
                        item = keys[node].pop(c)
                        bisect.insort(keys[alt], item)
                        for s in slices[node]:
                            slice_end[s] -= -item[0]
                        for s in slices[alt]:
                            slice_end[s] = max(slice_end[s], ends[alt] - item[0])
                        moves += 1
                        across += alt // N != node // N
                        done = True
                    else:
                        pair = pick_swap(keys[node], keys[alt], margin)
                        if pair is not None:
                            ik, ij = keys[node].pop(pair[0]), keys[alt].pop(pair[1])
                            bisect.insort(keys[alt], ik)
                            bisect.insort(keys[node], ij)
                            for s in slices[node]:
                                slice_end[s] -= ij[0] - ik[0]
                            for s in slices[alt]:
                                slice_end[s] += ij[0] - ik[0]
                            swaps += 1
                            across += alt // N != node // N
                            done = True
            if not done:
                if parent[node] < 0:  # a root with nothing to give to another GPU's root (lines 8-10)
                    stop = True
                    break
                if parent[node] not in visited:
                    visited.add(parent[node])
                    queue.append(parent[node])
            changed = changed or done
        stats["iterations"] = it + 1
        if not changed:
            break
        if exact:
            tms, new_omega = _timing(tree, as_lists(), dur)
        else:
            new_omega = max(slice_end)
        if new_omega < best:
            best, best_lists = new_omega, as_lists()
            stats.update(moves=moves, swaps=swaps, moves_between_gpus=across)
        if stop or not new_omega < omega * (1.0 - min_improvement):
            break
        omega = new_omega
    stats["moves_tried"], stats["swaps_tried"] = moves, swaps
    return best_lists, stats


# ---------------------------------------------------------------------------
# Public API

def _check(problem: Any, refine: Any, prune: Any, max_iterations: Any, min_improvement: Any) -> None:
    options.flag(refine, "refine")
    options.flag(prune, "prune")
    if isinstance(max_iterations, bool) or not isinstance(max_iterations, numbers.Integral) or max_iterations < 0:
        raise OptionError(f"max_iterations must be an integer >= 0, got {max_iterations!r}")
    if (isinstance(min_improvement, bool) or not isinstance(min_improvement, numbers.Real)
            or not 0.0 <= min_improvement < 1.0):
        raise OptionError(f"min_improvement must lie in [0, 1), got {min_improvement!r}")
    if not isinstance(problem, NodeProblem):
        raise InstanceError(f"expected a mig_node.NodeProblem, got {type(problem).__name__}", field="problem")
    check_scale(problem.batch)


@options.typed
def plan(problem: NodeProblem, refine: bool = True, *, prune: bool = True, max_iterations: int = 100,
         min_improvement: float = 0.0, **unknown: Any) -> NodePlan:
    """FAR phases 1-3 on a node of g GPUs (see the module docstring).

    Parameters
    ----------
    problem
        A :class:`~instances.mig_node.NodeProblem`.
    refine
        Run phase 3 (Algorithm 2 across the g trees).
    prune
        Skip allocations whose bound ``max(h_max, W / (g * S))`` cannot beat
        the best makespan so far (the result is the same).
    max_iterations, min_improvement
        Refinement stop rules, as for :func:`heuristics.far.plan`.

    Raises
    ------
    InstanceError
        For a problem that is not a node problem or whose times are too large
        to sum; :class:`~instances.errors.OptionError` for a bad or unknown option.

    Examples
    --------
    One GPU is FAR itself:

    >>> from instances import mig, mig_node
    >>> p = mig.generate(12, "A100", seed=4)
    >>> plan(mig_node.NodeProblem.from_problem(p, 1)).makespan == far.plan(p).makespan
    True
    """
    options.no_unknown(unknown, "far_node.plan")
    _check(problem, refine, prune, max_iterations, min_improvement)
    t0 = time.perf_counter()
    g, tree, names = problem.gpus, Tree(problem.gpu), [t.name for t in problem.tasks]
    if not names:
        return NodePlan(problem, NodeSchedule(problem.gpu, g, []), {}, {}, 0.0, 0.0,
                        {"allocations": 1, "allocations_tried": 0, "allocations_pruned": 0, "allocation_index": 0,
                         "moves": 0, "swaps": 0, "iterations": 0, "moves_between_gpus": 0, "seconds": 0.0})
    times = [dict(t.times) for t in problem.tasks]
    slices = g * tree.num_slices
    best, best_alloc, best_lists, best_index = _INF, None, None, 0
    tried = pruned = 0
    allocations = [[a[name] for name in names] for a in far.family(problem.batch)]
    for k, alloc in enumerate(allocations):
        durations = [times[j][s] for j, s in enumerate(alloc)]
        work = math.fsum(s * d for s, d in zip(alloc, durations))
        if prune and work / slices * (1 - 1e-9) >= best:
            break  # the work never decreases along the family: nothing later can win
        if prune and max(durations) >= best:
            pruned += 1
            continue
        tried += 1
        found = _phase2(tree, g, alloc, times, best if prune else _INF)
        if found is not None and found[0] < best:
            best, best_alloc, best_lists, best_index = found[0], alloc, found[1], k
    assert best_alloc is not None and best_lists is not None
    dur = [times[j][s] for j, s in enumerate(best_alloc)]
    tms, ms2 = _timing(tree, best_lists, dur)
    stats: dict[str, Any] = {"allocations": len(allocations), "allocations_tried": tried,
                             "allocations_pruned": pruned, "allocation_index": best_index,
                             "moves": 0, "swaps": 0, "iterations": 0, "moves_between_gpus": 0}
    final, final_tms, ms = best_lists, tms, ms2
    if refine and len(names) > 1:
        # Algorithm 2 as written (slice ends updated by +- task times, exact re-timing at the end); if
        # that is not better, again with an exact re-timing after every iteration; never accept worse
        for exact in (False, True):
            lists, rstats = _refine(tree, g, dur, best_lists, max_iterations=max_iterations,
                                    min_improvement=min_improvement, exact=exact)
            stats["iterations"] = rstats["iterations"]
            if lists is not None:
                new_tms, new_ms = _timing(tree, lists, dur)
                if new_ms < ms2:
                    final, final_tms, ms = lists, new_tms, new_ms
                    stats.update(moves=rstats["moves"], swaps=rstats["swaps"],
                                 moves_between_gpus=rstats["moves_between_gpus"])
                    break
            if not rstats["moves_tried"] and not rstats["swaps_tried"]:
                break
    parts = [to_schedule(tree, final[k], dur, names, final_tms[k]) for k in range(g)]
    stats["seconds"] = time.perf_counter() - t0
    return NodePlan(problem, NodeSchedule.from_parts(problem.gpu, parts),
                    {names[j]: s for j, s in enumerate(best_alloc)},
                    {names[j]: k for k in range(g) for lst in final[k] for j in lst}, ms2, ms, stats,
                    [[[names[j] for j in lst] for lst in final[k]] for k in range(g)])


@options.typed
def schedule(problem: NodeProblem, refine: bool = True, **options_: Any) -> NodeSchedule:
    """FAR's node schedule (feasible for :func:`instances.mig_node.check`); options as for :func:`plan`.

    Examples
    --------
    >>> from instances import mig_node
    >>> p = mig_node.generate(8, "A100", gpus=3, seed=2)
    >>> mig_node.check(p, schedule(p))
    []
    """
    return plan(problem, refine, **options_).schedule


@options.known_options
def far_refined(problem: NodeProblem) -> NodeSchedule:
    """FAR on the node, phases 1-3."""
    return schedule(problem, refine=True)


@options.known_options
def far_unrefined(problem: NodeProblem) -> NodeSchedule:
    """FAR on the node without phase 3."""
    return schedule(problem, refine=False)


#: Display name -> node method (the rows ``benchmarks.compare --gpus g`` shows), in table order.
METHODS: dict[str, Callable[[NodeProblem], NodeSchedule]] = {
    "FAR": far_refined,
    "FAR without refinement": far_unrefined,
}
