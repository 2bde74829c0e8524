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
best makespan. A second, sharper bound (:class:`_Bound`) follows phase 2's
structure: a node starts only after its parent's size has run out of tasks,
so the instances of each size see a water level computed from lower bounds on
when their parents split; it skips almost every allocation of a large
generated batch. Consecutive allocations differ in one task, so the LPT lists
per size are updated by one ordered removal and one ordered insertion instead
of a re-sort, and a phase-2 simulation aborts as soon as a task ends at or
after the best makespan. The simulations of the scan (:func:`_makespan`)
hand a run of equal durations to the instances of its size in one step
(:func:`_hand_out`), with the very float additions one-by-one assignment
would do, so batches of near-identical tasks cost per distinct duration, not
per task; the winner is then re-simulated task by task for its lists.

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
import sys
import time
from collections import deque
from itertools import accumulate, repeat
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, Sequence

from heuristics import far_refine
from heuristics.far_tree import TIES, Tree, Timing, check_scale, replay, std_heap_pop, std_heap_push, to_schedule
from instances import options
from instances.errors import InstanceError, OptionError
from instances.gpus import Placement
from instances.mig_problem import Problem
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
# Phase 2: Algorithm 1

def _phase2(tree: Tree, groups: Mapping[int, list[tuple[float, int]]], n: int,
            best: float = _INF, ties: str = "ours") -> tuple[float, list[list[int]]] | None:
    """Algorithm 1 on one allocation; ``None`` as soon as a task ends at or after ``best``.

    ``groups[s]`` lists ``(-t_j(s), j)`` of the tasks given size ``s``, sorted
    (LPT, ties by input order). Returns the makespan and the task indices of
    every node in execution order. ``ties="reference"`` pops equal end times
    as the authors' ``std::priority_queue`` does; their push order (root, a
    node after each task, children left to right) is this loop's.
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
    if ties == "reference":
        pop, push = std_heap_pop, std_heap_push
    else:
        pop, push = heapq.heappop, heapq.heappush
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


_TINY = sys.float_info.min

#: Runs of at least this many equal durations are handed out in one step.
_BLOCK = 8


def _makespan(tree: Tree, rt: Sequence[Sequence[float]], rc: Sequence[Sequence[int]], n: int,
              best: float = _INF) -> float | None:
    """:func:`_phase2`'s makespan (rule ``"ours"``) from run-length LPT queues; ``None`` if it is >= ``best``.

    ``rt[s]`` are the distinct durations of the tasks of size ``s`` in
    decreasing order and ``rc[s]`` how many tasks have each. Every end time is
    the same float sum as in :func:`_phase2` (same additions in the same
    order), so the makespan is the same bit for bit; only the node lists are
    not built. A node that stays the earliest keeps its tasks without a heap
    round trip (``heappushpop``), and a run of equal durations is handed out
    by :func:`_hand_out`.
    """
    size = tree.size
    children = tree.children
    tc = tree.tc
    td = tree.td
    top = max(size) + 1
    ri = [0] * top      # current run of each size
    used = [0] * top    # tasks of that run already assigned
    started = [False] * tree.n
    # suffix[s][r]: total time of runs r, r+1, ... of size s (a lower bound on when a size runs out);
    # built on first use only: batches without long runs of equal times never need it
    suffix = _Suffix(rt, rc)
    heap: list[tuple[float, int]] = []
    pop = heapq.heappop
    push = heapq.heappush
    pushpop = heapq.heappushpop
    reconfig_end = 0.0
    remaining = n
    makespan = 0.0
    item: tuple[float, int] | None = (0.0, 0)
    while item is not None:
        end, v = item
        s = size[v]
        r = ri[s]
        ts = rt[s]
        if r < len(ts):
            left = rc[s][r] - used[s]
            if not started[v]:
                started[v] = True
                if end > reconfig_end:
                    reconfig_end = end
                reconfig_end += tc[v]
                end = reconfig_end
            elif left >= _BLOCK:
                got = _hand_out(heap, end, v, ts[r], left, size, started,
                                lambda u: _runs_out(u, rt, ri, used, suffix))
                if got is not None:
                    heap, count, last = got
                    if last >= best:
                        return None
                    if last > makespan:
                        makespan = last
                    remaining -= count
                    if count == left:
                        ri[s] = r + 1
                        used[s] = 0
                    else:
                        used[s] += count
                    item = pop(heap) if heap else None
                    continue
            end += ts[r]
            if left == 1:
                ri[s] = r + 1
                used[s] = 0
            else:
                used[s] += 1
            remaining -= 1
            if end >= best:
                return None
            if end > makespan:
                makespan = end
            item = pushpop(heap, (end, v))
        else:
            if remaining:
                if started[v]:
                    if end > reconfig_end:
                        reconfig_end = end
                    reconfig_end += td[v]
                for c in children[v]:
                    push(heap, (end, c))
            item = pop(heap) if heap else None
    return makespan


class _Suffix(dict):
    """``suffix[s]``: the suffix sums of size ``s``'s run totals, computed when first read."""

    def __init__(self, rt: Sequence[Sequence[float]], rc: Sequence[Sequence[int]]) -> None:
        super().__init__()
        self.rt, self.rc = rt, rc

    def __missing__(self, s: int) -> list[float]:
        ts, cs = self.rt[s], self.rc[s]
        out = list(accumulate((t * c for t, c in zip(reversed(ts), reversed(cs))), initial=0.0))[::-1]
        self[s] = out
        return out


def _runs_out(s: int, rt: Sequence[Sequence[float]], ri: Sequence[int], used: Sequence[int],
              suffix: Any) -> tuple[float, float] | None:
    """``(work left, longest task left)`` of size ``s``, or ``None`` when it has no task left."""
    r = ri[s]
    if r >= len(rt[s]):
        return None
    t = rt[s][r]
    return suffix[s][r] - used[s] * t, t


def _hand_out(heap: list[tuple[float, int]], end: float, v: int, t: float, count: int, size: Sequence[int],
              started: Sequence[bool], runs_out: Any) -> tuple[list[tuple[float, int]], int, float] | None:
    """Assign up to ``count`` tasks of duration ``t`` as Algorithm 1 would, in one step.

    Node ``v`` (just popped at ``end``) and the running nodes of its size in
    ``heap`` each see the sequence ``f, f + t, (f + t) + t, ...`` of pop times
    (float additions, one by one); the heap pops the merge of these sequences
    by ``(time, node)`` until ``count`` tasks are gone or the next pop would
    come at or after the first event that changes anything else: the pop of a
    node not yet created, or of a running node of another size once that size
    has no task left (a split). A size with tasks left runs out no earlier than
    the water level of its remaining work (less one longest task per node)
    over its running nodes, so its pops before that only assign its own tasks.
    Returns the new heap, the number of tasks assigned and the latest new end,
    or ``None`` (the caller then assigns one task) when the sequences are too
    short to be cut exactly or ``t`` is too small to advance the floats.
    """
    s = size[v]
    running = [(end, v)]
    rest = []
    others: dict[int, list[float]] = {}
    limit: tuple[float, int] | None = None
    for it in heap:
        u = it[1]
        su = size[u]
        if su == s and started[u]:
            running.append(it)
            continue
        rest.append(it)
        if started[u]:
            others.setdefault(su, []).append(it[0])
        elif limit is None or it < limit:
            limit = it
    for su, ends in others.items():
        left = runs_out(su)
        if left is None:
            first = (min(ends), -1)
        else:
            work, longest = left
            level = _water(work - len(ends) * longest, ends)
            first = (level - 1e-9 * (abs(level) + 1.0), -1)
        if limit is None or first < limit:
            limit = first
    m = len(running)
    fs = sorted(f for f, _ in running)
    acc = 0.0
    level = fs[0] + count * t
    for k in range(1, m + 1):  # water level of count * t over the m nodes
        acc += fs[k - 1]
        level = (count * t + acc) / k
        if k == m or level <= fs[k]:
            break
    if limit is not None and limit[0] < level:
        level = limit[0]  # the cut comes from the limit: look around it
    seqs = []
    lows = []
    base = 0
    cand = []
    for i, (f, u) in enumerate(running):
        k = int((level - f) / t) if level > f else 0
        lo = k - 2 if k > 2 else 0
        hi = k + 3
        # seq[q - lo]: the end after q more tasks, for q in lo..hi (float additions one by one)
        seq = list(accumulate(repeat(t, hi - lo), initial=_advance(f, t, lo)))
        if not seq[-1] > seq[-2]:
            return None  # t below the floats' resolution there
        seqs.append(seq)
        lows.append(lo)
        base += lo
        cand.extend((seq[q], u, i) for q in range(hi - lo))
    need = min(count - base, len(cand))
    if need <= 0:
        return None
    cand.sort()
    chosen_last = cand[need - 1]
    # the elements left out of the windows must fall on the right sides of the cut
    for i, (f, u) in enumerate(running):
        if (seqs[i][-1], u) <= chosen_last[:2]:
            return None  # the cut falls after the window
    taken = list(lows)
    for _, _, i in cand[:need]:
        taken[i] += 1
    for i in range(m):
        if lows[i] and taken[i] == lows[i]:
            return None  # the cut may fall before the window
    if limit is not None and chosen_last[:2] >= limit:
        lv, lu = limit
        for i, (f, u) in enumerate(running):
            seq = seqs[i]
            q = bisect.bisect_left(seq, lv)
            if q < len(seq) and seq[q] == lv and u < lu:
                q += 1
            if q == 0 and lows[i]:
                return None  # the cut falls before the window
            if lows[i] + q < taken[i]:
                taken[i] = lows[i] + q
    assigned = 0
    last = -_INF
    new_heap = rest
    for i, (f, u) in enumerate(running):
        q = taken[i]
        e = seqs[i][q - lows[i]]
        if q:
            assigned += q
            if e > last:
                last = e
        new_heap.append((e, u))
    if not assigned:
        return None
    heapq.heapify(new_heap)
    return new_heap, assigned, last


def _advance(x: float, t: float, q: int) -> float:
    """``x + t + t + ... (q times)`` with the rounding of one float addition per step, in O(binades) steps.

    Within a binade ``[2**e, 2**(e+1))`` the floats are the multiples of one
    spacing; when ``t`` is such a multiple, steps that stay in the binade are
    exact, so ``k`` of them are ``x + k * t`` (exact too). The step that crosses
    into the next binade is done as a real addition (it may round).

    >>> x = 0.1
    >>> for _ in range(1000):
    ...     x += 6.0
    >>> _advance(0.1, 6.0, 1000) == x
    True
    """
    while q > 0:
        if x < _TINY:  # 0 or subnormal: no binade to stay in yet
            x += t
            q -= 1
            continue
        if t % math.ulp(x):
            return deque(accumulate(repeat(t, q), initial=x), maxlen=1)[0]
        top = math.ldexp(1.0, math.frexp(x)[1])
        k = min(q, int((top - x) / t))
        while k > 0 and x + k * t >= top:
            k -= 1
        if k == 0:
            x += t
            q -= 1
        else:
            x = x + k * t
            q -= k
    return x


def _water(work: float, starts: Sequence[float]) -> float:
    """Smallest L with sum((L - a)^+ for a in starts) >= work: the water level."""
    fs = sorted(starts)
    acc = 0.0
    level = fs[0] + work
    for k in range(1, len(fs) + 1):
        acc += fs[k - 1]
        level = (work + acc) / k
        if k == len(fs) or level <= fs[k]:
            break
    return level


class _Bound:
    """A lower bound on phase 2's makespan for an allocation, from per-size totals only.

    Phase 2 runs the tasks of size ``s`` only on the nodes of size ``s``, and
    a node is available only once its parent has been popped with no task of
    its size left. Sizes are handled from the largest down (a child is always
    smaller than its parent). For size ``s`` with ``a_v`` a lower bound on
    when node ``v`` could start a task (parent's split + its create, + the
    parent's destroy when the parent surely ran tasks), the last task of size
    ``s`` ends no earlier than the water level ``L`` of the total time
    ``P_s`` over the ``a_v``, nor before ``min a_v + h_s`` (``h_s`` the
    longest such task). Every node of size ``s`` is popped again (and split)
    no earlier than the last assignment of a size-``s`` task, which is at or
    after ``L - h_s - R`` (``R``: every create and destroy time of the tree
    added up, the most a create can wait); a lone node of its size ends at
    ``a_v + P_s`` exactly. The bound is the largest of these over sizes.
    """

    def __init__(self, tree: Tree) -> None:
        self.tree = tree
        self.order = sorted(tree.same_size, reverse=True)
        self.slack = math.fsum(tree.tc) + math.fsum(tree.td)

    def __call__(self, work: Mapping[int, float], count: Mapping[int, int], longest: Mapping[int, float]) -> float:
        tree = self.tree
        parent = tree.parent
        tc = tree.tc
        td = tree.td
        split = [0.0] * tree.n
        ran = [False] * tree.n
        bound = 0.0
        for s in self.order:
            nodes = tree.same_size[s]
            avail = [split[parent[v]] if parent[v] >= 0 else 0.0 for v in nodes]
            if not count.get(s):
                for v, a in zip(nodes, avail):
                    split[v] = a
                continue
            starts = [a + tc[v] + (td[parent[v]] if parent[v] >= 0 and ran[parent[v]] else 0.0)
                      for v, a in zip(nodes, avail)]
            level = _water(work[s], starts)
            h = longest[s]
            bound = max(bound, level, min(starts) + h)
            if len(nodes) == 1:
                split[nodes[0]] = starts[0] + work[s]
                ran[nodes[0]] = True
            else:
                tau = level - h - self.slack
                for v, a in zip(nodes, avail):
                    split[v] = a if a > tau else tau
        return bound


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
    ``W / slices``, nor :class:`_Bound` reaches the best makespan so far; the
    simulations use :func:`_makespan` (rule ``"ours"``) or :func:`_phase2`
    (``"reference"``), and the winner is simulated once more for its lists.
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
    bound = _Bound(tree)
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
                ms = _makespan(tree, [[-x for x in keys] for keys in rkeys],
                               [[rcount[s][x] for x in keys] for s, keys in enumerate(rkeys)], n, cap)
            else:
                res = _phase2(tree, groups, n, cap, data.ties)
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
    res = _phase2(tree, _groups(data, best_alloc), n, _INF, data.ties)
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
    ms, lists = _phase2(data.tree, _groups(data, alloc), data.n, _INF, ties)  # type: ignore[misc]
    stats = {"allocations": 1, "allocations_tried": 1, "allocations_pruned": 0, "allocation_index": 0}
    return _make_plan(data, alloc, lists, refine, stats, ms, max_iterations=max_iterations,
                      min_improvement=min_improvement)


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
        (:func:`heuristics.far_tree.check_scale`);
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
