"""Phase 2 of FAR (Algorithm 1) as fast simulations, and a lower bound on its makespan.

Part of FAR's chain of modules (listed in :mod:`heuristics.far`), after
``far_refine``: :mod:`heuristics.far_batch` scans the family of allocations
(phase 1) with these functions; most callers use :mod:`heuristics.far`.

:func:`simulate`
    Algorithm 1 (FAR paper, Sec. 3.2) on one allocation: list scheduling on
    the repartitioning tree (Figure 4, :class:`heuristics.far_tree.Tree`)
    with a min-heap of instances by end time, LPT order within each size and
    create/destroy operations serialised through the global ``reconfig_end``.
    It returns the makespan and the task lists of every node, or ``None`` as
    soon as a task ends at or after a given cap (the best makespan so far).
:func:`runs_makespan`
    The same makespan (rule ``"ours"``) bit for bit, without the node lists,
    from run-length LPT queues: a run of equal durations is handed to the
    instances of its size in one step (``_hand_out``), with the very float
    additions one-by-one assignment would do (``_advance``), so batches of
    near-identical tasks cost per distinct duration, not per task.
:class:`Bound`
    A lower bound on phase 2's makespan from per-size totals only: a node
    starts only after its parent's size has run out of tasks, so the instances
    of each size see a water level computed from lower bounds on when their
    parents split. It skips almost every allocation of a large generated batch.

Examples
--------
>>> from instances import mig
>>> from heuristics.far_tree import Tree
>>> p = mig.Problem("A30", [mig.Task("a", {1: 8.0, 2: 4.5, 4: 2.5}), mig.Task("b", {1: 2.0, 2: 1.5, 4: 1.0})])
>>> tree = Tree(p.gpu)
>>> groups = {2: [(-4.5, 0), (-1.5, 1)]}   # both tasks on size 2, LPT order
>>> ms, node_tasks = simulate(tree, groups, 2)
>>> ms == runs_makespan(tree, [[], [], [4.5, 1.5], [], []], [[], [], [1, 1], [], []], 2)
True
>>> Bound(tree)({2: 6.0}, {2: 2}, {2: 4.5}) <= ms
True
"""

from __future__ import annotations

import bisect
import heapq
import math
import sys
from collections import deque
from itertools import accumulate, repeat
from typing import Any, Mapping, Sequence

from heuristics.far_tree import Tree, std_heap_pop, std_heap_push
from instances.options import known_options

__all__ = ["simulate", "runs_makespan", "Bound"]

_INF = math.inf


@known_options
def simulate(tree: Tree, groups: Mapping[int, list[tuple[float, int]]], n: int,
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


@known_options
def runs_makespan(tree: Tree, rt: Sequence[Sequence[float]], rc: Sequence[Sequence[int]], n: int,
              best: float = _INF) -> float | None:
    """:func:`simulate`'s makespan (rule ``"ours"``) from run-length LPT queues; ``None`` if it is >= ``best``.

    ``rt[s]`` are the distinct durations of the tasks of size ``s`` in
    decreasing order and ``rc[s]`` how many tasks have each. Every end time is
    the same float sum as in :func:`simulate` (same additions in the same
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


class Bound:
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

