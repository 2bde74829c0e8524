"""FAR phase 3: refinement by task moves and swaps (FAR paper, Sec. 3.3, Algorithm 2).

Second module of FAR's chain (listed in :mod:`heuristics.far`), after
``far_tree``: it works on node task lists of
:class:`heuristics.far_tree.Tree` and re-times them with
:func:`heuristics.far_tree.replay`. :func:`pick_move` and :func:`pick_swap`
are also used by the multi-batch concatenation (Sec. 4.3).

Each iteration starts from the leaves of the repartitioning tree whose slices
reach the makespan ``omega`` and walks towards the root (a FIFO queue). For an
instance ``I`` it takes the other instance ``I^a`` of the same size whose slices
end first and, with the margin ``m = omega - end(I^a)``:

* **move** (lines 11-16): the task ``T`` of ``I`` with ``T.time < m`` closest to
  ``m / 2`` (binary search in ``I``'s LPT-sorted list) goes to ``I^a``;
* **swap** (lines 18-22), when no task can move: ``T_k`` of ``I`` and ``T_j`` of
  ``I^a`` with ``0 < T_k.time - T_j.time < m``, the difference closest to
  ``m / 2`` (double-pointer search over both sorted lists), trade places;
* otherwise ``I``'s parent joins the queue; reaching the root ends the
  refinement after the current iteration (lines 8-10).

Within an iteration slice end times are updated by +- the task times, as in
Algorithm 2; after each iteration every start time and reconfiguration is
recomputed exactly (line 26) by replaying Algorithm 1 on the fixed node task
lists, and the makespan ``omega`` is updated from that replay.

Stop rules (parameters): the root was reached, no operation was possible, the
exact makespan did not improve by at least ``min_improvement`` (relative;
default 0 = any strict improvement), or ``max_iterations`` were done. The best
task lists seen are returned, so refinement never makes the makespan worse.

Examples
--------
The move candidate for a margin of 8 s is the task shorter than 8 s closest
to 4 s:

>>> pick_move([(-9.0, 0), (-5.0, 1), (-2.0, 2)], 8.0)
1
"""

from __future__ import annotations

import bisect
from collections import deque
from typing import Any, Sequence

from heuristics.far_tree import Tree, replay
from instances.errors import OptionError
from instances.options import known_options

__all__ = ["refine", "pick_move", "pick_swap"]

_BIG = 1 << 62


@known_options
def pick_move(keys: Sequence[tuple[float, int]], margin: float) -> int | None:
    """Index in ``keys`` (sorted ``(-time, task)``) of the task with time < margin closest to margin/2.

    Examples
    --------
    >>> pick_move([(-9.0, 0), (-5.0, 1), (-2.0, 2)], 8.0)
    1
    >>> pick_move([(-9.0, 0)], 8.0) is None
    True
    """
    lo = bisect.bisect_right(keys, (-margin, _BIG))  # first task with time < margin
    if lo >= len(keys):
        return None
    half = margin / 2.0
    i = bisect.bisect_left(keys, (-half, -1))
    best = None
    best_gap = None
    for c in (i - 1, i):
        if lo <= c < len(keys):
            gap = abs(-keys[c][0] - half)
            if best_gap is None or gap < best_gap:
                best, best_gap = c, gap
    return best


@known_options
def pick_swap(keys_i: Sequence[tuple[float, int]], keys_a: Sequence[tuple[float, int]],
              margin: float) -> tuple[int, int] | None:
    """Indices ``(k, j)`` with ``0 < t_k - t_j < margin``, the difference closest to margin/2.

    Double-pointer search over both lists (each sorted by decreasing time).

    Examples
    --------
    >>> pick_swap([(-10.0, 0), (-6.0, 1)], [(-7.0, 2), (-1.0, 3)], 4.0)
    (0, 0)
    """
    half = margin / 2.0
    a_times = [-k[0] for k in keys_i]
    b_times = [-k[0] for k in keys_a]
    nb = len(b_times)
    best = None
    best_gap = None
    # walk I's tasks by increasing time; the target t_j = t_k - m/2 increases, so the
    # pointer into I^a's tasks (read from the shortest) only moves forward
    ptr = nb - 1
    for k in range(len(a_times) - 1, -1, -1):
        a = a_times[k]
        target = a - half
        while ptr >= 0 and b_times[ptr] < target:
            ptr -= 1
        for j in (ptr, ptr + 1):
            if 0 <= j < nb:
                d = a - b_times[j]
                if 0.0 < d < margin:
                    gap = abs(d - half)
                    if best_gap is None or gap < best_gap:
                        best, best_gap = (k, j), gap
    return best


@known_options
def refine(tree: Tree, durations: Sequence[float], lists: Sequence[Sequence[int]], *, max_iterations: int = 100,
           min_improvement: float = 0.0, exact: bool = False,
           ties: str = "ours") -> tuple[list[list[int]] | None, dict[str, Any]]:
    """Algorithm 2 on phase 2's tree.

    Parameters
    ----------
    tree
        The GPU's repartitioning tree.
    durations
        Time of each task at its allocated size.
    lists
        Task indices per tree node in phase 2's order (LPT).
    max_iterations, min_improvement
        Stop rules (see the module docstring).
    exact
        ``False``: Algorithm 2 as written, the makespan of each iteration read
        from the slice ends updated by +- task times (cheap; the caller
        retimes exactly at the end). ``True``: replay Algorithm 1 after each
        iteration and keep the lists with the best exact makespan.
    ties
        The heap tie rule of the exact replays (see :func:`heuristics.far_tree.replay`).

    Returns
    -------
    (lists or None, stats)
        The best node task lists found (``None`` if nothing improved) and
        ``moves``, ``swaps`` (operations behind the returned lists),
        ``moves_tried``, ``swaps_tried``, ``iterations``.

    Examples
    --------
    Four size-1 instances of an A30 (no reconfiguration); slice 0 runs tasks 2
    and 1 (50 + 20 s) and ends last. The instance that ends first (slice 3,
    30 s) leaves a margin of 40 s, so the 20 s task moves there (Figure 5).

    >>> from instances import gpus
    >>> tree = Tree(gpus.get("A30").without_reconfiguration())
    >>> lists = [[], [], [], [2, 1], [0], [3], [4]]
    >>> durations = [40.0, 20.0, 50.0, 45.0, 30.0]
    >>> replay(tree, lists, durations).makespan
    70.0
    >>> best, stats = refine(tree, durations, lists)
    >>> best, replay(tree, best, durations).makespan, stats["moves"]
    ([[], [], [], [2], [0], [3], [4, 1]], 50.0, 1)
    """
    if max_iterations < 0:
        raise OptionError("max_iterations must be >= 0")
    if not 0.0 <= min_improvement < 1.0:
        raise OptionError("min_improvement must lie in [0, 1)")
    dur = durations
    keys = [sorted((-dur[j], j) for j in lst) for lst in lists]
    slices = tree.slices
    parent = tree.parent
    size = tree.size

    def as_lists() -> list[list[int]]:
        return [[j for _, j in k] for k in keys]

    tm = replay(tree, as_lists(), dur, ties=ties)
    omega = tm.makespan
    best = omega
    best_lists = None
    moves = swaps = 0
    stats = {"moves": 0, "swaps": 0, "moves_tried": 0, "swaps_tried": 0, "iterations": 0}
    slice_end = [0.0] * tree.num_slices
    for it in range(max_iterations):
        if exact or it == 0:
            slice_end = [0.0] * tree.num_slices
            for v in range(tree.n):
                if keys[v]:
                    e = tm.node_end[v]
                    for s in slices[v]:
                        if e > slice_end[s]:
                            slice_end[s] = e
        tol = 1e-9 * max(1.0, omega)
        queue = deque(v for v in tree.leaves if any(slice_end[s] >= omega - tol for s in slices[v]))
        visited = set(queue)
        stop = False
        changed = False
        while queue:
            node = queue.popleft()
            if node == 0:
                stop = True
                break
            done = False
            alts = [v for v in tree.same_size[size[node]] if v != node]
            if alts and keys[node]:
                ends = {v: max(slice_end[s] for s in slices[v]) for v in alts}
                alt = min(alts, key=lambda v: (ends[v], v))
                margin = omega - ends[alt]
                if margin > tol:
                    c = pick_move(keys[node], margin)
                    if c is not None:
                        item = keys[node].pop(c)
                        bisect.insort(keys[alt], item)
                        t = -item[0]
                        for s in slices[node]:
                            slice_end[s] -= t
                        for s in slices[alt]:
                            slice_end[s] = ends[alt] + t if slice_end[s] < ends[alt] + t else slice_end[s]
                        moves += 1
                        done = True
                    else:
                        pair = pick_swap(keys[node], keys[alt], margin)
                        if pair is not None:
                            k, j = pair
                            ik, ij = keys[node].pop(k), keys[alt].pop(j)
                            bisect.insort(keys[alt], ik)
                            bisect.insort(keys[node], ij)
                            d = ij[0] - ik[0]  # t_k - t_j > 0
                            for s in slices[node]:
                                slice_end[s] -= d
                            for s in slices[alt]:
                                slice_end[s] += d
                            swaps += 1
                            done = True
            if not done and parent[node] not in visited:
                visited.add(parent[node])
                queue.append(parent[node])
            changed = changed or done
        stats["iterations"] = it + 1
        if not changed:
            break
        if exact:
            tm = replay(tree, as_lists(), dur, ties=ties)
            new_omega = tm.makespan
        else:
            new_omega = max(slice_end)
        if new_omega < best:
            best = new_omega
            best_lists = as_lists()
            stats["moves"], stats["swaps"] = moves, swaps
        if stop or not new_omega < omega * (1.0 - min_improvement):
            break
        omega = new_omega
    stats["moves_tried"], stats["swaps_tried"] = moves, swaps
    return best_lists, stats
