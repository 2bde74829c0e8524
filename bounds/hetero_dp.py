"""Compiled time-indexed network of one machine without idle time: a grid of states, no arc list.

The same relaxation as :class:`bounds.hetero_ti.Network` (Lagrangian
relaxation of "every job exactly once", shortest path over time with no job
twice in a row, no 2-cycle ``i, j, i``, adjacent-pair dominance, and
elimination of what no schedule cheaper than a threshold can use; Tanaka,
Fujikuma & Araki, "An exact algorithm for single-machine scheduling without
machine idle time", J. Scheduling 2009, Sec. 3-4), stored so that it scales
to a hundred jobs and more:

* the states ``(t, j)`` (job ``j`` completes at ``t``) are a dense
  ``(T + 1) x n`` grid with an ``alive`` flag, so the labels of a pass are
  plain arrays indexed by time and job;
* the arcs into a state are a bit set over the predecessor jobs
  (``mask[t, j]``, ``ceil(n / 64)`` machine words): ``n`` bits instead of an
  explicit arc of 16 bytes, which lets adjacent-pair dominance and arc
  elimination act on single arcs at 1/128 of the memory of an arc list
  (n = 100, T = 5000: 8 MB instead of about 400 MB);
* the passes are loops compiled by numba (``cache=True``: compiled once per
  machine, then loaded from the cache).

All values are floats holding integers (costs) minus the multipliers; a
state's cost is ``cost[t, j] - mu_j``.

Examples
--------
>>> import numpy as np
>>> from bounds.hetero_ti import tardiness_costs
>>> p, w, d = np.array([3, 2, 4]), np.array([2, 1, 3]), np.array([4, 3, 5])
>>> g = Grid(p, tardiness_costs(p, w, d), weights=w)
>>> fw = g.forward(np.zeros(3)); g.path(fw), fw.value
([(2, 4), (0, 7), (1, 9)], 12.0)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

try:
    from numba import njit
except ImportError:  # pragma: no cover - numba is a pinned dependency; this keeps the code importable
    def njit(*args, **kwargs):
        if args and callable(args[0]):
            return args[0]
        return lambda f: f

from bounds.hetero_ti import INF, Expired, wspt_rank
from instances.options import known_options

__all__ = ["Grid", "GridForward", "GridBackward", "Successive", "words", "tardiness_precedences", "on_time_tail",
           "tail_rank"]


@known_options
def words(n: int) -> int:
    """Machine words of a bit set over ``n`` jobs."""
    return max(1, (int(n) + 63) // 64)


_DEBRUIJN = np.uint64(0x03F79D71B4CB0A89)
_DEBRUIJN_TABLE = np.array([0, 1, 48, 2, 57, 49, 28, 3, 61, 58, 50, 42, 38, 29, 17, 4, 62, 55, 59, 36, 53, 51, 43,
                            22, 45, 39, 33, 30, 24, 18, 12, 5, 63, 47, 56, 27, 60, 41, 37, 16, 54, 35, 52, 21, 44,
                            32, 23, 11, 46, 26, 40, 15, 34, 20, 31, 10, 25, 14, 19, 9, 13, 8, 7, 6], dtype=np.int64)


@njit(cache=True, inline="always")
def lowest_bit(x):
    """Index of the lowest set bit of a non-zero ``uint64`` (de Bruijn multiplication),
    so that the loops over a bit set visit only its members."""
    return _DEBRUIJN_TABLE[np.int64(((x & (~x + np.uint64(1))) * _DEBRUIJN) >> np.uint64(58))]


@njit(cache=True)
def _has(mask, t, j, i):
    return (mask[t, j, i >> 6] >> np.uint64(i & 63)) & np.uint64(1)


@njit(cache=True)
def _build(p, cost, rank, alive, mask):
    """Set the bits of the arcs that pass the no-repeat and adjacency tests.

    Arc ``i -> j`` ending at ``t`` (``i`` ends at ``s = t - p_j``) is left out
    when the interchange ``j, i`` (same end time) is strictly cheaper, or as
    cheap with ``j`` before ``i`` in the tie-break ``rank``."""
    T1, n = cost.shape
    one = np.uint64(1)
    for t in range(1, T1):
        for j in range(n):
            if not alive[t, j]:
                continue
            s = t - p[j]
            if s <= 0:
                continue
            ctj = cost[t, j]
            for i in range(n):
                if i == j or not alive[s, i]:
                    continue
                lhs = cost[s, i] + ctj
                rhs = cost[t - p[i], j] + cost[t, i]
                if lhs > rhs or (lhs == rhs and rank[i] > rank[j]):
                    continue
                mask[t, j, i >> 6] |= one << np.uint64(i & 63)
    # a state that is neither a first job nor entered by an arc is never on a path
    for t in range(1, T1):
        for j in range(n):
            if alive[t, j] and t - p[j] > 0:
                empty = True
                for w in range(mask.shape[2]):
                    if mask[t, j, w] != 0:
                        empty = False
                        break
                if empty:
                    alive[t, j] = False


@njit(cache=True)
def _forward(p, cost, mu, alive, mask, f1, p1, f2):
    """Forward labels (see :class:`GridForward`); returns nothing, fills the arrays."""
    T1, n = cost.shape
    W = mask.shape[2]
    for t in range(T1):
        for j in range(n):
            f1[t, j] = np.inf
            f2[t, j] = np.inf
            p1[t, j] = -3
    for t in range(1, T1):
        for j in range(n):
            if not alive[t, j]:
                continue
            s = t - p[j]
            cj = cost[t, j] - mu[j]
            if s == 0:
                f1[t, j] = cj
                p1[t, j] = -1
                continue
            m1 = np.inf
            m2 = np.inf
            bj = -3
            for w in range(W):
                x = mask[t, j, w]
                while x != 0:
                    i = w * 64 + lowest_bit(x)
                    x &= x - np.uint64(1)
                    v = f2[s, i] if p1[s, i] == j else f1[s, i]
                    if v < m1:
                        m2 = m1
                        m1 = v
                        bj = i
                    elif v < m2:
                        m2 = v
            f1[t, j] = m1 + cj
            f2[t, j] = m2 + cj
            p1[t, j] = bj


@njit(cache=True)
def _backward(p, cost, mu, alive, mask, b1, s1, b2):
    """Backward labels (see :class:`GridBackward`); returns the value at the start.

    States are visited in decreasing time and push their labels to their
    predecessors (the arcs are stored at the target, so this reads the bit
    sets in order)."""
    T1, n = cost.shape
    T = T1 - 1
    W = mask.shape[2]
    for t in range(T1):
        for j in range(n):
            b1[t, j] = np.inf
            b2[t, j] = np.inf
            s1[t, j] = -3
    for j in range(n):
        if alive[T, j]:
            b1[T, j] = 0.0
            s1[T, j] = -2
    best = np.inf
    for t in range(T, 0, -1):
        for k in range(n):
            if not alive[t, k] or b1[t, k] == np.inf:
                continue
            s = t - p[k]
            ck = cost[t, k] - mu[k]
            if s == 0:
                v = ck + b1[t, k]
                if v < best:
                    best = v
                continue
            for w in range(W):
                x = mask[t, k, w]
                while x != 0:
                    i = w * 64 + lowest_bit(x)
                    x &= x - np.uint64(1)
                    v = ck + (b2[t, k] if s1[t, k] == i else b1[t, k])
                    if v < b1[s, i]:
                        if s1[s, i] != k:
                            b2[s, i] = b1[s, i]
                        b1[s, i] = v
                        s1[s, i] = k
                    elif v < b2[s, i] and s1[s, i] != k:
                        b2[s, i] = v
    return best


@njit(cache=True)
def _eliminate(p, cost, mu, alive, mask, f1, p1, f2, b1, s1, b2, limit):
    """Clear every arc (and then state) whose cheapest path costs more than ``limit``
    (``sum(mu)`` excluded); returns the number of states removed."""
    T1, n = cost.shape
    W = mask.shape[2]
    removed = 0
    for t in range(1, T1):
        for j in range(n):
            if not alive[t, j]:
                continue
            s = t - p[j]
            cj = cost[t, j] - mu[j]
            if s == 0:
                if cj + b1[t, j] > limit:
                    alive[t, j] = False
                    removed += 1
                continue
            left = False
            for w in range(W):
                x = mask[t, j, w]
                keep = x
                while x != 0:
                    i = w * 64 + lowest_bit(x)
                    x &= x - np.uint64(1)
                    fu = f2[s, i] if p1[s, i] == j else f1[s, i]
                    bv = b2[t, j] if s1[t, j] == i else b1[t, j]
                    if not alive[s, i] or fu + cj + bv > limit:
                        keep &= ~(np.uint64(1) << np.uint64(i & 63))
                mask[t, j, w] = keep
                if keep != 0:
                    left = True
            if not left:
                alive[t, j] = False
                removed += 1
    return removed


@njit(cache=True)
def _path(p, cost, mask, f1, p1, f2, jlast, out_j, out_t):
    """The shortest path ending at ``(T, jlast)``, walked back; returns its length
    (jobs and end times in ``out_j``/``out_t``, last job first)."""
    T1, n = cost.shape
    W = mask.shape[2]
    t = T1 - 1
    j = jlast
    which = 1
    k = 0
    while True:
        out_j[k] = j
        out_t[k] = t
        k += 1
        s = t - p[j]
        if s <= 0:
            break
        best = np.inf
        bi = -1
        for w in range(W):
            x = mask[t, j, w]
            while x != 0:
                i = w * 64 + lowest_bit(x)
                x &= x - np.uint64(1)
                if which == 2 and i == p1[t, j]:
                    continue
                v = f2[s, i] if p1[s, i] == j else f1[s, i]
                if v < best:
                    best = v
                    bi = i
        if bi < 0:
            return -1
        which = 2 if p1[s, bi] == j else 1
        t, j = s, bi
    return k


@njit(cache=True)
def _successive(p, cost, mu, alive, F1, J1, F2, J2):
    """Shortest path with no job twice in a row: per time the best two ends
    with different jobs (``O(nT)``); returns the value at ``T``."""
    T1, n = cost.shape
    for t in range(T1):
        F1[t] = np.inf
        F2[t] = np.inf
        J1[t] = -3
        J2[t] = -3
    F1[0] = 0.0
    J1[0] = -1
    for t in range(1, T1):
        for j in range(n):
            if not alive[t, j]:
                continue
            s = t - p[j]
            v = (F2[s] if J1[s] == j else F1[s]) + cost[t, j] - mu[j]
            if v < F1[t]:
                F2[t] = F1[t]
                J2[t] = J1[t]
                F1[t] = v
                J1[t] = j
            elif v < F2[t]:
                F2[t] = v
                J2[t] = j
    return F1[T1 - 1]


@known_options
def on_time_tail(p, w, d) -> np.ndarray:
    """Jobs that one optimal schedule of weighted tardiness completes on time
    at its end, by level: ``0`` for the other jobs, ``k >= 1`` for the ``k``-th
    step of the cascade below.

    A job with ``d_j >= P`` (``P`` the sum of the processing times) or
    ``w_j = 0`` costs nothing wherever it runs; moving it to the end moves
    the jobs after it earlier and costs no more. Once such jobs ``L`` close
    the schedule, a job with ``d_j >= P - p(L)`` is on time as the last job
    before them, and so on (Emmons' rule for a job that is on time even when
    last, Operations Research 1969, Theorem 3, with no known successors). With
    :func:`tail_rank` the tie-break order puts these jobs last, deepest level
    first, so the schedule that comes first in that order among the optimal
    ones ends with exactly them, in rank order (an adjacent interchange that
    moves a tail job later costs no more and puts a job of lower rank first).

    Examples
    --------
    >>> on_time_tail([2, 3, 4], [1, 1, 1], [9, 7, 2]).tolist()
    [1, 2, 0]
    """
    p = np.asarray(p, dtype=np.int64)
    w = np.asarray(w, dtype=float)
    d = np.asarray(d, dtype=float)
    level = np.zeros(len(p), dtype=np.int64)
    free = (w <= 0) | ~np.isfinite(d)
    end, k = int(p.sum()), 0
    while True:
        new = (level == 0) & (free | (d >= end))
        if not new.any():
            return level
        k += 1
        level[new] = k
        end -= int(p[new].sum())


@known_options
def tail_rank(p, w, d) -> np.ndarray:
    """Tie-break rank for :class:`Grid` and :func:`tardiness_precedences`:
    :func:`~bounds.hetero_ti.wspt_rank` for the jobs outside the on-time
    tail (:func:`on_time_tail`), then the tail's jobs, its deepest level
    first, each level by WSPT.

    Examples
    --------
    >>> tail_rank([2, 3, 4], [1, 1, 1], [9, 7, 2]).tolist()
    [2, 1, 0]
    """
    p = np.asarray(p, dtype=np.int64)
    w = np.asarray(w, dtype=float)
    level = on_time_tail(p, w, d)
    base = wspt_rank(p, np.maximum(w, 1e-300))
    # head (level 0) first, then the tail from its deepest level to the jobs last of all
    key = np.where(level == 0, 0, level.max() + 1 - level)
    order = np.lexsort((base, key))
    rank = np.empty(len(p), dtype=np.int64)
    rank[order] = np.arange(len(p))
    return rank


def _tail_pairs(p, w, d, rank) -> np.ndarray:
    """The pairs of the on-time tail (:func:`on_time_tail`): every other job
    before every tail job, the tail in rank order; none when ``rank`` does not
    put the tail last, deepest level first (:func:`tail_rank`), since the
    schedule the other rules keep may then end otherwise."""
    level = on_time_tail(p, w, d)
    n = len(level)
    pairs = np.zeros((n, n), dtype=bool)
    tail = level > 0
    if not tail.any():
        return pairs
    key = np.where(tail, level.max() + 1 - level, 0)
    r = np.asarray(rank)
    # every job of a lower key must have a lower rank
    for a in range(int(key.max())):
        lo, hi = key <= a, key > a
        if lo.any() and r[lo].max() >= r[hi].min():
            return pairs
    pairs[~tail[:, None] & tail[None, :]] = True
    pairs |= tail[:, None] & tail[None, :] & (r[:, None] < r[None, :])
    return pairs


@known_options
def tardiness_precedences(p, w, d, rank) -> np.ndarray:
    """Pairs ``i`` before ``j`` that some optimal schedule of weighted tardiness
    ``sum w_j max(0, C_j - d_j)`` keeps, as a transitively closed boolean matrix.

    ``i`` precedes ``j`` when ``p_i <= p_j``, ``w_i >= w_j``, ``i`` comes first
    in the tie-break ``rank`` and ``d_i <= max(d_j, e_j)``, ``e_j`` the earliest
    completion of ``j`` after its known predecessors: interchanging ``i`` and
    ``j`` in a schedule with ``j`` first then costs no more and moves ``i`` to
    the earlier position (an interchange argument in the style of Emmons'
    dominance rules for tardiness, 1969). So the schedule that comes first in ``rank``
    order among the optimal ones keeps every pair, the same schedule that the
    adjacency and three-job rules of :class:`Grid` keep. Where ``rank`` puts
    the on-time tail last (:func:`tail_rank`), its pairs come first: every
    other job before each tail job, the tail in rank order
    (:func:`on_time_tail`).

    Examples
    --------
    >>> tardiness_precedences([1, 2], [2, 1], [3, 5], [0, 1]).tolist()
    [[False, True], [False, False]]
    """
    p, w, d, rank = _job_arrays(p, w, d, rank)
    base = (p[:, None] <= p[None, :]) & (w[:, None] >= w[None, :]) & (rank[:, None] < rank[None, :])
    tail = _tail_pairs(p, w, d, rank)
    P = np.zeros_like(base)
    while True:
        early = p + P.T.astype(np.int64) @ p          # earliest completion after the known predecessors
        new = _closure(tail | (base & (d[:, None] <= np.maximum(d, early)[None, :])))
        if (new == P).all():
            return P
        P = new


def _job_arrays(p, w, d, rank) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Processing times as integers, weights and due dates as floats, the rank as given: the precedence
    rules' inputs."""
    return np.asarray(p, dtype=np.int64), np.asarray(w, dtype=float), np.asarray(d, dtype=float), np.asarray(rank)


def _closure(pairs: np.ndarray) -> np.ndarray:
    """Transitive closure of a boolean pair matrix (Floyd-Warshall)."""
    out = pairs.copy()
    for k in range(len(out)):
        out |= out[:, k:k + 1] & out[k:k + 1, :]
    return out


@njit(cache=True)
def _three_dominated(p, cost, rank, a, b, c, t):
    """Whether the jobs ``a, b, c`` in this order, ``c`` completing at ``t``,
    are beaten by another order of the same three in the same interval: a
    strictly cheaper one, or one as cheap that comes first in the tie-break
    ``rank`` (compared position by position)."""
    u = t - p[a] - p[b] - p[c]
    base = cost[u + p[a], a] + cost[u + p[a] + p[b], b] + cost[t, c]
    for q in range(5):
        if q == 0:
            x, y, z = a, c, b
        elif q == 1:
            x, y, z = b, a, c
        elif q == 2:
            x, y, z = b, c, a
        elif q == 3:
            x, y, z = c, a, b
        else:
            x, y, z = c, b, a
        v = cost[u + p[x], x] + cost[u + p[x] + p[y], y] + cost[t, z]
        if v < base:
            return True
        if v == base:
            if rank[x] != rank[a]:
                if rank[x] < rank[a]:
                    return True
            elif rank[y] != rank[b]:
                if rank[y] < rank[b]:
                    return True
            elif rank[z] < rank[c]:
                return True
    return False


@njit(cache=True)
def _dominate3(p, cost, rank, alive, mask):
    """Clear the arcs that only continue dominated triples; returns the number cleared.

    Arc ``i -> j`` ending at ``t`` is cleared when every live arc ``k -> i``
    into its tail (``k != j``) makes ``k, i, j`` a dominated triple
    (:func:`_three_dominated`), or when every live arc ``j -> l`` out of its
    head (``l != i``) makes ``i, j, l`` one. A state left without arcs in
    (not a first job) is removed."""
    T1, n = cost.shape
    T = T1 - 1
    W = mask.shape[2]
    one = np.uint64(1)
    cleared = 0
    for t in range(1, T1):
        for j in range(n):
            if not alive[t, j]:
                continue
            s = t - p[j]
            if s <= 0:
                continue
            left = False
            for w in range(W):
                x = mask[t, j, w]
                keep = x
                while x != 0:
                    i = w * 64 + lowest_bit(x)
                    x &= x - one
                    if not alive[s, i]:
                        continue
                    dom = False
                    r = s - p[i]
                    if r > 0:
                        dom = True
                        for w2 in range(W):
                            y = mask[s, i, w2]
                            while y != 0:
                                k = w2 * 64 + lowest_bit(y)
                                y &= y - one
                                if k == j or not alive[r, k]:
                                    continue
                                if not _three_dominated(p, cost, rank, k, i, j, t):
                                    dom = False
                                    break
                            if not dom:
                                break
                    if not dom and t < T:
                        dom = True
                        for l in range(n):
                            t2 = t + p[l]
                            if l == i or t2 > T or not alive[t2, l]:
                                continue
                            if not (mask[t2, l, j >> 6] >> np.uint64(j & 63)) & one:
                                continue
                            if not _three_dominated(p, cost, rank, i, j, l, t2):
                                dom = False
                                break
                    if dom:
                        keep &= ~(one << np.uint64(i & 63))
                        cleared += 1
                mask[t, j, w] = keep
                if keep != 0:
                    left = True
            if not left:
                alive[t, j] = False
    return cleared


@njit(cache=True)
def _count_arcs(alive, mask):
    total = 0
    T1, n, W = mask.shape
    for t in range(T1):
        for j in range(n):
            if alive[t, j]:
                for w in range(W):
                    x = mask[t, j, w]
                    while x != 0:
                        x &= x - np.uint64(1)
                        total += 1
    return total


@dataclass
class GridForward:
    """Forward labels of a :class:`Grid`, ``(T + 1) x n`` arrays: ``f1`` the
    cheapest path from time 0 to the state (its cost included), ``p1`` the job
    before it (``-1`` the start, ``-3`` none), ``f2`` the cheapest whose job
    before differs from ``p1``; ``value`` the shortest path to ``T``,
    ``bound`` = value + sum(mu), ``last`` the job ending it (``-1``: none)."""

    f1: np.ndarray
    p1: np.ndarray
    f2: np.ndarray
    value: float
    bound: float
    last: int


@dataclass
class GridBackward:
    """Backward labels: ``b1`` the cheapest path from the state to ``T`` (its own
    cost excluded), ``s1`` the job after it (``-2`` the end), ``b2`` the
    cheapest whose next job differs; ``value`` the shortest path from the start."""

    b1: np.ndarray
    s1: np.ndarray
    b2: np.ndarray
    value: float


class Grid:
    """The time-indexed network of one machine without idle time, as a grid of states.

    The interface of :class:`bounds.hetero_ti.Network` that
    :func:`bounds.hetero_subgradient.optimize` uses (``forward``, ``path``,
    ``counts``, ``eliminate``, ``capped``), without idle time or arrivals.

    Parameters
    ----------
    p
        Integer processing times ``>= 1``.
    cost
        ``(T + 1, n)``, ``cost[t, j]`` for ``j`` completing at ``t`` (``inf``
        where ``t < p_j``), integer values (exact dominance tests).
    rank, weights
        Tie-break order of the adjacency test (default :func:`wspt_rank` of
        ``p`` and ``weights``).
    max_cost
        Leave out the states that cost more than this by themselves; no
        schedule of cost ``<= max_cost`` uses them, so ``min(bound,
        max_cost)`` stays valid (:attr:`capped`).
    prec
        Pairs that one optimal schedule keeps: the states outside their
        windows (:meth:`restrict`) go before the arcs are built (fewer to test).
    deadline
        A ``time.perf_counter`` value; :class:`~bounds.hetero_ti.Expired` if it
        passes before the build.
    """

    @known_options
    def __init__(self, p, cost: np.ndarray, rank=None, weights=None, max_cost: float | None = None,
                 deadline: float | None = None, prec: np.ndarray | None = None):
        p = np.ascontiguousarray(p, dtype=np.int64)
        n = len(p)
        if n == 0 or (p < 1).any():
            raise ValueError("need at least one job and processing times >= 1")
        T = int(p.sum())
        cost = np.ascontiguousarray(cost, dtype=float)
        if cost.shape != (T + 1, n):
            raise ValueError(f"cost must have shape {(T + 1, n)}, got {cost.shape}")
        if rank is None:
            w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
            rank = wspt_rank(p, np.maximum(w, 1e-300))
        self.p, self.cost, self.rank = p, cost, np.ascontiguousarray(rank, dtype=np.int64)
        self.n = self.jobs = n
        self.T = T
        t = np.arange(T + 1)[:, None]
        alive = np.isfinite(cost) & (t >= p[None, :])
        self.capped = max_cost is not None
        if self.capped:
            alive &= cost <= max_cost
        self.alive = np.ascontiguousarray(alive)
        self.windowed = 0 if prec is None else self.restrict(prec)
        if deadline is not None and time.perf_counter() >= deadline:
            raise Expired("deadline passed before building the network")
        self.mask = np.zeros((T + 1, n, words(n)), dtype=np.uint64)
        _build(self.p, self.cost, self.rank, self.alive, self.mask)

    @property
    def N(self) -> int:
        """Number of states left."""
        return int(self.alive.sum())

    def arcs(self) -> int:
        """Number of arcs left (the start's arcs not counted)."""
        return int(_count_arcs(self.alive, self.mask))

    def _mu(self, mu) -> np.ndarray:
        return np.ascontiguousarray(mu, dtype=float)

    def forward(self, mu) -> GridForward:
        """Shortest paths from time 0 with 2-cycle elimination."""
        mu = self._mu(mu)
        shape = self.cost.shape
        f1, p1, f2 = (np.empty(shape), np.empty(shape, dtype=np.int64), np.empty(shape))
        _forward(self.p, self.cost, mu, self.alive, self.mask, f1, p1, f2)
        row = f1[self.T]
        last = int(np.argmin(row))
        value = float(row[last])
        if not math.isfinite(value):
            return GridForward(f1, p1, f2, INF, INF, -1)
        return GridForward(f1, p1, f2, value, value + float(np.sum(mu)), last)

    def backward(self, mu) -> GridBackward:
        """Shortest paths to ``T`` with 2-cycle elimination."""
        mu = self._mu(mu)
        shape = self.cost.shape
        b1, s1, b2 = np.empty(shape), np.empty(shape, dtype=np.int64), np.empty(shape)
        value = _backward(self.p, self.cost, mu, self.alive, self.mask, b1, s1, b2)
        return GridBackward(b1, s1, b2, float(value))

    def through(self, fw: GridForward, bw: GridBackward) -> np.ndarray:
        """Cheapest path through each state (``inf`` where none; ``sum(mu)`` excluded)."""
        with np.errstate(invalid="ignore"):
            v = np.where(fw.p1 != bw.s1, fw.f1 + bw.b1, np.minimum(fw.f1 + bw.b2, fw.f2 + bw.b1))
        return np.where(self.alive, v, INF)

    def eliminate(self, mu, threshold: float, fw: GridForward | None = None,
                  bw: GridBackward | None = None) -> int:
        """Remove every arc and state whose cheapest path costs more than
        ``threshold`` (true units, ``sum(mu)`` included); returns the number of
        states removed."""
        mu = self._mu(mu)
        fw = self.forward(mu) if fw is None else fw
        bw = self.backward(mu) if bw is None else bw
        limit = threshold - float(np.sum(mu))
        return int(_eliminate(self.p, self.cost, mu, self.alive, self.mask, fw.f1, fw.p1, fw.f2,
                              bw.b1, bw.s1, bw.b2, limit))

    def restrict(self, prec: np.ndarray) -> int:
        """Remove the states outside each job's window: ``(t, j)`` needs
        ``t >= p_j + p(predecessors of j)`` and ``t <= T - p(successors of j)``
        for the pairs ``prec[i, j]`` (``i`` before ``j``) that one optimal
        schedule keeps (:func:`tardiness_precedences`); returns the states removed."""
        P = np.asarray(prec, dtype=np.int64)
        early = self.p + P.T @ self.p
        late = self.T - P @ self.p
        t = np.arange(self.T + 1)[:, None]
        out = self.alive & ((t < early[None, :]) | (t > late[None, :]))
        self.alive &= ~out
        return int(out.sum())

    def dominate3(self, rounds: int = 2) -> int:
        """Clear the arcs that lie only on dominated triples of adjacent jobs
        (the dominance of three successive jobs of Tanaka, Fujikuma &
        Araki 2009): arc ``i -> j`` ending at ``t`` goes when every arc
        into ``i`` (from ``k != j``) makes ``k, i, j`` beaten by another
        order of the three in the same interval, or every arc out of ``j``
        (to ``l != i``) makes ``i, j, l`` beaten. Ties go to the order first
        in the tie-break ``rank``, so the schedule that is first in that
        order among the optimal ones keeps all its arcs (the argument of the
        adjacent-pair rule). ``rounds`` sweeps at most, each on the result
        of the last; returns the arcs cleared.

        Its cost grows with the arcs times the jobs: meant for a network
        already reduced by elimination.
        """
        total = 0
        for _ in range(rounds):
            c = int(_dominate3(self.p, self.cost, self.rank, self.alive, self.mask))
            total += c
            if c == 0:
                break
        return total

    def path(self, fw: GridForward) -> list[tuple[int, int]]:
        """The shortest path of ``fw`` as ``(job, completion time)`` pairs in time order."""
        if fw.last < 0:
            return []
        cap = self.T + 1
        out_j = np.empty(cap, dtype=np.int64)
        out_t = np.empty(cap, dtype=np.int64)
        k = _path(self.p, self.cost, self.mask, fw.f1, fw.p1, fw.f2, fw.last, out_j, out_t)
        if k < 0:  # pragma: no cover - labels always have a realising arc
            raise RuntimeError("no arc realises a forward label")
        return list(zip(out_j[:k][::-1].tolist(), out_t[:k][::-1].tolist()))

    def counts(self, path) -> np.ndarray:
        """How often each job occurs on a path."""
        return np.bincount(np.array([j for j, _ in path], dtype=np.int64), minlength=self.n)


class Successive:
    """The cheap relaxation of the first stage (Tanaka, Fujikuma & Araki 2009,
    Sec. 4): the shortest path over the states of a :class:`Grid` with no job
    twice in a row and no other rule, ``O(nT)`` per pass. Its multipliers,
    optimised by :func:`bounds.hetero_subgradient.optimize`, start the
    stronger relaxation of the grid near its optimum.

    Examples
    --------
    >>> from bounds.hetero_ti import tardiness_costs
    >>> p, w, d = np.array([3, 2, 4]), np.array([2, 1, 3]), np.array([4, 3, 5])
    >>> s = Successive(Grid(p, tardiness_costs(p, w, d)))
    >>> fw = s.forward(np.zeros(3)); s.path(fw), fw.value
    ([(0, 3), (2, 7), (1, 9)], 12.0)
    """

    def __init__(self, grid: Grid):
        self.grid = grid
        self.p, self.cost, self.T, self.n, self.jobs = grid.p, grid.cost, grid.T, grid.n, grid.jobs
        self.capped = grid.capped

    def forward(self, mu) -> GridForward:
        mu = np.ascontiguousarray(mu, dtype=float)
        T1 = self.T + 1
        F1, F2 = np.empty(T1), np.empty(T1)
        J1, J2 = np.empty(T1, dtype=np.int64), np.empty(T1, dtype=np.int64)
        value = float(_successive(self.p, self.cost, mu, self.grid.alive, F1, J1, F2, J2))
        fw = GridForward(F1, J1, F2, INF, INF, -1)
        fw.J2 = J2
        if math.isfinite(value):
            fw.value, fw.bound, fw.last = value, value + float(np.sum(mu)), int(J1[self.T])
        return fw

    def path(self, fw: GridForward) -> list[tuple[int, int]]:
        out = []
        t, j = self.T, fw.last
        while t > 0 and j >= 0:
            out.append((int(j), int(t)))
            s = t - int(self.p[j])
            j = int(fw.J2[s] if fw.p1[s] == j else fw.p1[s])
            t = s
        return out[::-1]

    def counts(self, path) -> np.ndarray:
        return np.bincount(np.array([j for j, _ in path], dtype=np.int64), minlength=self.n)

    def eliminate(self, mu, threshold, fw=None, bw=None) -> int:
        return 0
