"""Time-indexed network of one machine without idle time, and its Lagrangian relaxation.

The engine behind :mod:`bounds.hetero` and the exact method of
:mod:`milp.hetero_ssdp`; the multipliers are optimised in
:mod:`bounds.hetero_subgradient`, the state-space modifiers of the exact
method are in :mod:`milp.hetero_modifiers`. A single machine processes ``n`` jobs with integer
processing times ``p_j >= 1`` from time 0 without idle time, so the last job
ends at ``T = sum_j p_j``; job ``j`` completing at ``t`` costs
``cost[t, j]`` (integers, e.g. ``w_j max(0, t - d_j)`` in scaled units). A
schedule is a path from time 0 to ``T`` in the network whose *nodes* are
``(j, t)`` (job ``j`` completes at ``t``) and whose *arcs* join ``(i, s)``
to ``(j, s + p_j)`` (``j`` directly follows ``i``).

Lagrangian relaxation (Abdul-Razaq & Potts 1988; Tanaka, Fujikuma & Araki
2009, Sec. 3-4): relaxing "every job exactly once" with multipliers ``mu``
leaves a shortest path from 0 to ``T`` with arc costs ``cost[t, j] - mu_j``,
in which a job may occur several times or never;
``L(mu) = (shortest path) + sum_j mu_j`` is a lower bound for every ``mu``.
Three constraints that every optimal schedule of some kind satisfies are kept
in the path problem, which makes it much stronger than the plain
time-indexed bound:

* no job twice in a row and no 2-cycle ``i, j, i`` (each node keeps its best
  value with its predecessor job and the best value with another predecessor);
* adjacent-pair dominance: ``i`` directly before ``j`` ending at ``t`` is
  forbidden when the interchange ``j, i`` (same end time, nothing else moves)
  is strictly cheaper, or equally cheap and ``j`` precedes ``i`` in a fixed
  tie-break order. Repeated adjacent interchanges turn any optimal schedule
  into an optimal one without such a pair (each strict interchange lowers
  the cost, each tie lowers the number of inversions of the tie-break
  order), so some optimal schedule remains a path;
* elimination: a node or arc whose cheapest path through it costs more than
  a threshold ``theta`` is removed. If every schedule of cost ``<= theta``
  survives (it does: its path costs at least as much as the cheapest one
  through any of its nodes), the relaxation of the reduced network still
  bounds every schedule of cost ``<= theta``, so
  ``min(L_reduced(mu), theta)`` stays a valid bound.

Computation is vectorised with numpy over arcs: nodes are stored in time
order, arcs grouped by target; a pass handles a block of consecutive times at
once (``numpy.minimum.reduceat`` per target): the arcs from before the block
once, the arcs inside it as often as their longest chain requires, so the
Python loop runs over blocks, not over time units. A reduced network (after
elimination) is laid out by levels instead (longest arc path from the start,
about as many as a relaxed path has jobs): one step per level. The first
network leaves out the nodes that alone cost more than the incumbent
(``max_cost``), and its arcs are tested row by row of the cost matrix.

Costs must be integers (in some unit) so that the dominance tests are exact;
the callers scale and round the user's data (see :mod:`bounds.hetero`).

Examples
--------
>>> import numpy as np
>>> p, w, d = np.array([3, 2, 4]), np.array([2, 1, 3]), np.array([4, 3, 5])
>>> net = Network(p, tardiness_costs(p, w, d))
>>> fw = net.forward(np.zeros(3)); path = net.path(fw)
>>> [(int(j), int(t)) for j, t in path], fw.value
([(0, 3), (2, 7), (1, 9)], 12.0)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from instances.options import known_options

__all__ = ["Network", "Expired", "Forward", "Backward", "tardiness_costs", "wspt_rank", "INF"]

INF = math.inf
#: Networks up to this many arcs may be laid out by levels (:meth:`Network._levels`).
LEVEL_ARCS = 400_000
#: ... and if they have at most this many levels.
LEVEL_ITERATIONS = 1_000
_BIG = np.iinfo(np.int64).max


@known_options
def tardiness_costs(p, w, d, T: int | None = None) -> np.ndarray:
    """``cost[t, j] = w_j max(0, t - d_j)`` for ``t = 0..T``, ``inf`` where ``t < p_j``.

    Examples
    --------
    >>> tardiness_costs([2, 1], [3, 1], [2, 0]).tolist()
    [[inf, inf], [inf, 1.0], [0.0, 2.0], [3.0, 3.0]]
    """
    p = np.asarray(p, dtype=np.int64)
    w = np.asarray(w, dtype=float)
    d = np.asarray(d, dtype=float)
    T = int(p.sum()) if T is None else int(T)
    t = np.arange(T + 1, dtype=float)[:, None]
    cost = w[None, :] * np.maximum(0.0, t - d[None, :])
    cost[t < p[None, :]] = INF
    return cost


@known_options
def wspt_rank(p, w) -> np.ndarray:
    """Tie-break rank of the adjacency test: larger ``w/p`` first, then index.

    Among jobs that are all early (or all late) an adjacent interchange is a
    tie exactly when the order does not matter; ranking them by weighted
    shortest processing time makes the tie-break agree with the strict
    comparison of late jobs (Smith's rule).

    Examples
    --------
    >>> wspt_rank([2, 1, 4], [2, 3, 2]).tolist()
    [1, 0, 2]
    """
    p = np.asarray(p, dtype=float)
    w = np.asarray(w, dtype=float)
    order = np.lexsort((np.arange(len(p)), -(w / p)))
    rank = np.empty(len(p), dtype=np.int64)
    rank[order] = np.arange(len(p))
    return rank


@dataclass
class Forward:
    """Forward labels, one per node (and the start node at index ``N``).

    ``f1`` is the cheapest path from time 0 to the node (its cost included),
    ``p1`` the job before the node on it (``-1`` = the start), ``f2`` the
    cheapest path whose job before the node differs from ``p1``. ``value``
    is the shortest path to ``T`` (``inf`` when there is none) and ``bound``
    = value + sum(mu). The arcs of the paths are not stored: :meth:`Network.path`
    recovers them from the labels (one small search per node of the path is
    cheaper than tracking an argmin per arc in every pass).
    """

    f1: np.ndarray
    p1: np.ndarray
    f2: np.ndarray
    value: float
    bound: float
    last: int


@dataclass
class Backward:
    """Backward labels: ``b1`` cheapest path from the node to ``T`` (the node's
    own cost excluded), ``s1`` the job after the node on it (``-2`` = the end),
    ``b2`` the cheapest one whose next job differs from ``s1``."""

    b1: np.ndarray
    s1: np.ndarray
    b2: np.ndarray


class Expired(RuntimeError):
    """The deadline passed while a :class:`Network` was being built."""


def _check(deadline) -> None:
    if deadline is not None and time.perf_counter() >= deadline:
        raise Expired("deadline passed while building the network")


class Network:
    """The time-indexed network of one machine without idle time (see the module docstring).

    Parameters
    ----------
    p
        Integer processing times ``>= 1``.
    cost
        ``(T + 1, n)`` array, ``cost[t, j]`` for job ``j`` completing at ``t``
        (``inf`` where ``t < p_j``); integer values (exact dominance tests).
    rank
        Tie-break order of the adjacency test (default :func:`wspt_rank` of
        ``p`` and the slope of the last cost column, else the index).
    block
        Time units per vectorised block.
    max_cost
        Leave out the nodes that cost more than this by themselves (e.g. the
        cost of a known schedule less 1/2): no schedule of cost
        ``<= max_cost`` uses them, so, as after :meth:`eliminate`, the
        relaxation bounds those schedules and ``min(bound, max_cost)`` is
        valid (:attr:`capped` records it). On instances with a small
        incumbent this removes most of the network before it is built.
    """

    @known_options
    def __init__(self, p, cost: np.ndarray, rank=None, weights=None, block: int = 24,
                 release=None, horizon: int | None = None, idle: bool = False, deadline: float | None = None,
                 max_cost: float | None = None):
        p = np.asarray(p, dtype=np.int64)
        n = len(p)
        if n == 0 or (p < 1).any():
            raise ValueError("need at least one job and processing times >= 1")
        self.jobs = n                      # real jobs; with idle time, job n is the idle unit
        self.idle = bool(idle)
        T = int(p.sum()) if horizon is None else int(horizon)
        cost = np.asarray(cost, dtype=float)
        if cost.shape != (T + 1, n):
            raise ValueError(f"cost must have shape {(T + 1, n)}, got {cost.shape}")
        if rank is None:
            w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
            rank = wspt_rank(p, np.maximum(w, 1e-300))
        rank = np.asarray(rank, dtype=np.int64)
        release = np.zeros(n, dtype=np.int64) if release is None else np.asarray(release, dtype=np.int64)
        if self.idle:
            # one idle time unit is a pseudo-job of length 1 and cost 0, free of every rule
            p = np.append(p, 1)
            idle_cost = np.zeros((T + 1, 1))
            idle_cost[0] = INF
            cost = np.hstack([cost, idle_cost])
            rank = np.append(rank, n)
            release = np.append(release, 0)
        self.p, self.cost, self.rank, self.release = p, cost, rank, release
        self.n = len(p)
        self.T = T
        self.block = 1 if self.idle else max(1, int(block))
        t = np.arange(T + 1)[:, None]
        self.alive = np.isfinite(cost) & (t >= p[None, :] + release[None, :])
        self.capped = max_cost is not None
        if self.capped:
            self.alive &= cost <= max_cost
        # building is the largest single step on big horizons: it checks the clock as it goes
        self._deadline = deadline
        self._build()
        self._deadline = None

    # ------------------------------------------------------------------ structure
    def _build(self) -> None:
        """Nodes in time order, arcs (dominance-filtered) grouped by target, blocks."""
        n, T, p = self.n, self.T, self.p
        cost, rank = self.cost, self.rank
        tt, kk = np.nonzero(self.alive)               # row-major: sorted by t, then job
        N = len(tt)
        self.N = N
        self.node_t = tt.astype(np.int64)
        self.node_k = kk.astype(np.int64)
        self.node_id = np.full((T + 1, n), -1, dtype=np.int64)
        self.node_id[tt, kk] = np.arange(N)
        counts_t = np.bincount(tt, minlength=T + 1)
        self.time_ptr = np.concatenate([[0], np.cumsum(counts_t)])
        if not self.idle:
            src, tgt = self._dense_arcs()
            self.set_arcs(src, tgt)
            return
        # candidate sources of each target (k, t): every node at s = t - p_k (the start if s = 0)
        s = tt - p[kk]
        lo = np.where(s > 0, self.time_ptr[np.maximum(s, 0)], N)
        hi = np.where(s > 0, self.time_ptr[np.maximum(s, 0) + 1], N + 1)
        cnt = hi - lo
        tgt = np.repeat(np.arange(N), cnt)
        first = np.repeat(np.cumsum(cnt) - cnt, cnt)
        src = np.repeat(lo, cnt) + (np.arange(len(tgt)) - first)
        keep = self._allowed(src, tgt)
        self.set_arcs(src[keep], tgt[keep])

    def _dense_arcs(self) -> tuple[np.ndarray, np.ndarray]:
        """The arcs that pass the no-repeat and adjacency tests (without idle
        units), sorted by target then source: the same arcs as
        :meth:`_allowed` on every candidate, tested per target job over whole
        rows of the cost matrix (contiguous slices instead of gathers over
        millions of candidates).

        ``ok[t, k, j]``: job ``j`` directly before ``k`` that ends at ``t``;
        column ``n`` stands for the start, so ``np.nonzero`` lists the arcs
        in node order.
        """
        n, T, p, cost, rank, alive = self.n, self.T, self.p, self.cost, self.rank, self.alive
        ok = np.zeros((T + 1, n, n + 1), dtype=bool)
        for k in range(n):
            _check(self._deadline)
            ts = np.flatnonzero(alive[:, k])
            if len(ts) == 0:
                continue
            S = ts - p[k]
            ok[ts[S == 0], k, n] = True
            ts, S = ts[S > 0], S[S > 0]
            if len(ts) == 0:
                continue
            valid = alive[S]
            valid[:, k] = False
            # the interchange k, j ends j at t and k at t - p_j (>= p_k wherever (j, S) is alive)
            back = np.maximum(ts[:, None] - p[None, :], 0)
            lhs = cost[S] + cost[ts, k][:, None]
            rhs = cost[back, k] + cost[ts]
            with np.errstate(invalid="ignore"):
                bad = (lhs > rhs) | ((lhs == rhs) & (rank[None, :] > rank[k]))
            # the interchange must respect k's arrival: k would start where j started
            bad &= self.release[k] <= S[:, None] - p[None, :]
            ok[ts, k, :n] = valid & ~bad
        t, k, j = np.nonzero(ok)
        tgt = self.node_id[t, k]
        src = np.where(j == n, self.N, self.node_id[np.maximum(t - p[k], 0), np.minimum(j, n - 1)])
        return src, tgt

    def _allowed(self, src: np.ndarray, tgt: np.ndarray) -> np.ndarray:
        """Arcs ``src -> tgt`` that pass the no-repeat and adjacency tests."""
        n, p, rank, jobs = self.n, self.p, self.rank, self.jobs
        flat = self.cost.ravel()
        jobx = np.append(self.node_k, -1)
        j = jobx[src]
        k = self.node_k[tgt]
        t = self.node_t[tgt]
        free = (j < 0) | (j == jobs) | (k == jobs)      # the start or an idle unit: no rule
        ok = free | (j != k)
        real_all = np.flatnonzero(~free & ok)
        for c0 in range(0, len(real_all), 1 << 18):
            _check(self._deadline)
            real = real_all[c0:c0 + (1 << 18)]
            jr, kr, tr = j[real], k[real], t[real]
            pj = p[jr]
            sr_n = (tr - p[kr]) * n
            t_n = tr * n
            lhs = flat[sr_n + jr] + flat[t_n + kr]
            rhs = flat[t_n - pj * n + kr] + flat[t_n + jr]
            bad = (lhs > rhs) | ((lhs == rhs) & (rank[jr] > rank[kr]))
            # the interchange must respect k's arrival: k would start where j started
            bad &= self.release[kr] <= tr - p[kr] - pj
            ok[real[bad]] = False
        return ok

    def set_arcs(self, src: np.ndarray, tgt: np.ndarray, on_paths: bool = False) -> None:
        """Install the arcs (``tgt`` must be non-decreasing), drop the nodes that
        no path from time 0 to ``T`` uses any more, and lay out the blocks.

        ``on_paths``: every given arc is known to lie on a path from the start
        to ``T`` made of given arcs (true after :meth:`eliminate`: each arc on
        the cheapest path through a kept arc is itself no dearer, so it is
        kept too); then the nodes without arcs are dropped without the two
        reachability sweeps, which cost as much as a pass."""
        self._index(src, tgt, by_src=False)
        _check(getattr(self, "_deadline", None))
        N = self.N
        if on_paths:
            touched = np.zeros(N + 1, dtype=bool)
            touched[src] = True
            touched[tgt] = True
            reach = touched[:N]
        else:
            reach = self._reachable()
        dead = ~reach
        if dead.any():
            self.alive[self.node_t[dead], self.node_k[dead]] = False
            deadx = np.append(dead, False)
            keep = ~(deadx[self.arc_tgt] | deadx[self.arc_src])
            live = np.flatnonzero(~dead)
            remap = np.full(N + 1, -1, dtype=np.int64)
            remap[live] = np.arange(len(live))
            remap[N] = len(live)
            src, tgt = remap[self.arc_src[keep]], remap[self.arc_tgt[keep]]
            self.node_t, self.node_k = self.node_t[live], self.node_k[live]
            self.N = len(live)
            self.node_id[:] = -1
            self.node_id[self.node_t, self.node_k] = np.arange(self.N)
            counts_t = np.bincount(self.node_t, minlength=self.T + 1)
            self.time_ptr = np.concatenate([[0], np.cumsum(counts_t)])
            self._index(src, tgt)
        else:
            self._source_order()
        _check(getattr(self, "_deadline", None))
        self._blocks()

    def _index(self, src: np.ndarray, tgt: np.ndarray, by_src: bool = True) -> None:
        N = self.N
        self.arc_src, self.arc_tgt = src, tgt
        self.arc_srcjob = np.append(self.node_k, -1)[src]
        # an idle target never counts as a repeated job
        self.arc_tgtjob = np.where(self.node_k[tgt] == self.jobs, -5, self.node_k[tgt])
        self.in_ptr = np.searchsorted(tgt, np.arange(N + 1))
        self.by_src = self.out_ptr = None
        if by_src:
            self._source_order()

    def _source_order(self) -> None:
        """``by_src``: the arcs grouped by source (stable), ``out_ptr`` its ranges."""
        src = self.arc_src
        if self.N < 1 << 32:
            # two stable 16-bit passes (numpy radix-sorts 16-bit keys) beat one comparison sort
            order = np.argsort((src & 0xFFFF).astype(np.uint16), kind="stable")
            order = order[np.argsort((src[order] >> 16).astype(np.uint16), kind="stable")]
        else:
            order = np.argsort(src, kind="stable")
        self.by_src = order
        self.out_ptr = np.searchsorted(src[order], np.arange(self.N + 2))

    def _reachable(self) -> np.ndarray:
        """Nodes on some arc path from the start to a node at ``T`` (one sweep each way)."""
        N, T, tp = self.N, self.T, self.time_ptr
        fwd = np.zeros(N + 1, dtype=np.int64)
        fwd[N] = 1
        src, ptr = self.arc_src, self.in_ptr
        deadline = getattr(self, "_deadline", None)
        for t in range(1, T + 1):
            if t % 128 == 0:
                _check(deadline)
            v0, v1 = tp[t], tp[t + 1]
            if v0 == v1:
                continue
            a0, a1 = ptr[v0], ptr[v1]
            csum = np.concatenate([[0], np.cumsum(fwd[src[a0:a1]])])
            fwd[v0:v1] = (csum[ptr[v0 + 1:v1 + 1] - a0] - csum[ptr[v0:v1] - a0]) > 0
        # backward over the arcs as they are (grouped by target): a target's mark passes to its
        # sources; every arc out of a node reaches a later time, handled before the node's own
        bwd = np.zeros(N + 1, dtype=bool)
        bwd[tp[T]:tp[T + 1]] = True
        tgt = self.arc_tgt
        for t in range(T, 0, -1):
            if t % 128 == 0:
                _check(deadline)
            a0, a1 = ptr[tp[t]], ptr[tp[t + 1]]
            if a0 == a1:
                continue
            s = src[a0:a1]
            bwd[s[bwd[tgt[a0:a1]]]] = True
        return (fwd[:N] > 0) & (bwd[:N] > 0)

    def _blocks(self) -> None:
        """Time blocks with their node and arc ranges and the number of sweeps
        each needs.

        Forward: the arcs into a block of times are split into *outer* arcs
        (source before the block: their labels are final when the block
        starts, so one pass over them suffices) and *inner* arcs (source in the
        block), which are swept ``1 + longest inner chain`` times. Each part
        is stored contiguously, grouped by target, in ``self._f`` (a
        permutation of the arcs); the block records hold slices into it."""
        T, b = self.T, self.block
        self.fblocks = []   # (v0, v1, outer part, inner part, inner sweeps), increasing time
        self.bblocks = []   # (u0, u1, sweeps) over sources, decreasing time
        node_t = self.node_t
        arc_src_t = np.append(node_t, 0)[self.arc_src]
        arc_tgt_t = node_t[self.arc_tgt]
        A = len(self.arc_src)
        blk = (arc_tgt_t - 1) // b
        inner = arc_src_t >= blk * b + 1
        perm = np.argsort(2 * blk + inner, kind="stable")       # arcs are sorted by target already
        fsrc, ftgt = self.arc_src[perm], self.arc_tgt[perm]
        part = (2 * blk + inner)[perm]
        newseg = np.ones(A, dtype=bool)
        newseg[1:] = (ftgt[1:] != ftgt[:-1]) | (part[1:] != part[:-1])
        self._f = (fsrc, self.arc_srcjob[perm], self.arc_tgtjob[perm])
        seg_all = np.flatnonzero(newseg)
        part_lo = np.searchsorted(part, np.arange(2 * ((T + b - 1) // b) + 1))

        def layout(q):
            a0, a1 = part_lo[q], part_lo[q + 1]
            if a0 == a1:
                return None
            g0, g1 = np.searchsorted(seg_all, [a0, a1])
            seg = seg_all[g0:g1]
            cnt = np.diff(np.append(seg, a1))
            return a0, a1, ftgt[seg], seg - a0, cnt

        times = np.arange(T + 1)
        fdepth, bdepth = self._chain_depths((times - 1) // b, (T - 1 - times) // b)
        for q, t0 in enumerate(range(1, T + 1, b)):
            t1 = min(T + 1, t0 + b)
            v0, v1 = self.time_ptr[t0], self.time_ptr[t1]
            if v0 == v1:
                continue
            outer_part, inner_part = layout(2 * q), layout(2 * q + 1)
            sweeps = 0 if inner_part is None else int(fdepth[v0:v1].max())
            self.fblocks.append((v0, v1, outer_part, inner_part, sweeps))
        self.flevels = self._levels(sum(1.0 + 1.5 * blk[4] for blk in self.fblocks))
        # backward: sources in [t0, t1), their arcs reach targets at later times
        for t1 in range(T, 0, -b):
            t0 = max(0, t1 - b)
            u0, u1 = self.time_ptr[t0], self.time_ptr[t1]
            if u0 == u1:
                continue
            sweeps = 1 + int(bdepth[u0:u1].max())
            self.bblocks.append((u0, u1, sweeps))

    def _chain_depths(self, fblock: np.ndarray, bblock: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per node, the longest chain of arcs inside its block that ends at it,
        for two partitions of time into blocks (block number per time): one
        sweep over time for both, instead of a fixed-point iteration per block."""
        N, T, tp, ptr, src = self.N, self.T, self.time_ptr, self.in_ptr, self.arc_src
        src_t = np.append(self.node_t, -1)[src]
        fb = np.append(fblock, -7)[src_t]      # the start (time -1 here) is in no block
        bb = np.append(bblock, -7)[src_t]
        fd = np.zeros(N + 1, dtype=np.int64)
        bd = np.zeros(N + 1, dtype=np.int64)
        for t in range(1, T + 1):
            v0, v1 = tp[t], tp[t + 1]
            a0, a1 = ptr[v0], ptr[v1]
            if a0 == a1:
                continue
            has = np.diff(ptr[v0:v1 + 1]) > 0
            seg = (ptr[v0:v1] - a0)[has]
            u = src[a0:a1]
            fd[v0:v1][has] = np.maximum.reduceat(np.where(fb[a0:a1] == fblock[t], fd[u] + 1, 0), seg)
            bd[v0:v1][has] = np.maximum.reduceat(np.where(bb[a0:a1] == bblock[t], bd[u] + 1, 0), seg)
        return fd, bd

    def _levels(self, steps: float):
        """Forward layout by levels (longest arc path from the start), or ``None``.

        A node's labels depend only on nodes of lower level, so each level
        takes one vectorised step without the repeated sweeps of the time
        blocks. A reduced network has few levels (about as many as a relaxed
        path has jobs) but thousands of small blocks' worth of numpy calls, so
        the levels are used when there are fewer of them than the blocks'
        sequential ``steps``; computing them costs one sweep over time.
        """
        A = len(self.arc_src)
        if A == 0 or A > LEVEL_ARCS or self.idle:
            return None   # (idle units chain into as many levels as there are time steps)
        N, tp, ptr = self.N, self.time_ptr, self.in_ptr
        src, tgt = self.arc_src, self.arc_tgt
        level = np.zeros(N + 1, dtype=np.int64)
        # one sweep in time order (sources end before their targets); nodes without arcs stay at 0
        for t in range(1, self.T + 1):
            v0, v1 = tp[t], tp[t + 1]
            a0, a1 = ptr[v0], ptr[v1]
            if a0 == a1:
                continue
            cnt = np.diff(ptr[v0:v1 + 1])
            has = cnt > 0
            lv = np.maximum.reduceat(level[src[a0:a1]], (ptr[v0:v1] - a0)[has]) + 1
            level[v0:v1][has] = lv
        if level.max() > min(steps, LEVEL_ITERATIONS):
            return None   # deeper than the blocks are long: keep the blocks
        lv = level[tgt]
        perm = np.argsort(lv, kind="stable")       # stays grouped by target inside a level
        fsrc, ftgt, lvp = src[perm], tgt[perm], lv[perm]
        newseg = np.ones(A, dtype=bool)
        newseg[1:] = ftgt[1:] != ftgt[:-1]
        seg_all = np.flatnonzero(newseg)
        lo = np.searchsorted(lvp, np.arange(1, int(lvp[-1]) + 2))
        parts = []
        for a0, a1 in zip(lo[:-1], lo[1:]):
            if a0 == a1:
                continue
            g0, g1 = np.searchsorted(seg_all, [a0, a1])
            sg = seg_all[g0:g1]
            parts.append((a0, a1, ftgt[sg], sg - a0, np.diff(np.append(sg, a1))))
        return (fsrc, self.arc_srcjob[perm], self.arc_tgtjob[perm]), parts

    @staticmethod
    def _depth(src: np.ndarray, tgt: np.ndarray) -> int:
        """Longest chain of the given arcs (all inside one block)."""
        if len(src) == 0:
            return 0
        nodes = np.unique(np.concatenate([src, tgt]))
        depth = np.zeros(len(nodes), dtype=np.int64)
        si, ti = np.searchsorted(nodes, src), np.searchsorted(nodes, tgt)
        for _ in range(len(nodes)):
            new = depth.copy()
            np.maximum.at(new, ti, depth[si] + 1)
            if (new == depth).all():
                break
            depth = new
        return int(depth.max())

    # ------------------------------------------------------------------ passes
    def node_costs(self, mu: np.ndarray) -> np.ndarray:
        """``cost - mu`` per node (``mu`` over the real jobs)."""
        mu = np.asarray(mu, dtype=float)
        if self.idle:
            mu = np.append(mu, 0.0)
        return self.cost[self.node_t, self.node_k] - mu[self.node_k]

    def forward(self, mu: np.ndarray) -> Forward:
        """Shortest paths from time 0 (2-cycle elimination, see :class:`Forward`)."""
        N = self.N
        c = self.node_costs(mu)
        f1 = np.full(N + 1, INF)
        f2 = np.full(N + 1, INF)
        p1 = np.full(N + 1, -1, dtype=np.int64)
        f1[N] = 0.0
        src, sjob, tjob = self._f if self.flevels is None else self.flevels[0]

        def best_two(part):
            # per target: cheapest value, the job before it, cheapest with another job before
            a0, a1, _, seg, cnt = part
            u, sj = src[a0:a1], sjob[a0:a1]
            val = np.where(p1[u] == tjob[a0:a1], f2[u], f1[u])
            m1 = np.minimum.reduceat(val, seg)
            # any job of a cheapest arc will do: ties leave the second label equal to the first
            bj = np.minimum.reduceat(np.where(val == np.repeat(m1, cnt), sj, _BIG), seg)
            m2 = np.minimum.reduceat(np.where(sj == np.repeat(bj, cnt), INF, val), seg)
            return m1, bj, m2

        for part in ([] if self.flevels is None else self.flevels[1]):
            tg = part[2]
            m1, bj, m2 = best_two(part)
            f1[tg] = m1 + c[tg]
            f2[tg] = m2 + c[tg]
            p1[tg] = bj
        for v0, v1, outer, inner, sweeps in (self.fblocks if self.flevels is None else []):
            if inner is None:
                tg = outer[2]
                m1, bj, m2 = best_two(outer)
                f1[tg] = m1 + c[tg]
                f2[tg] = m2 + c[tg]
                p1[tg] = bj
                continue
            o1 = np.full(v1 - v0, INF)
            o2 = np.full(v1 - v0, INF)
            oj = np.full(v1 - v0, -1, dtype=np.int64)
            if outer is not None:
                tg = outer[2]
                o1[tg - v0], oj[tg - v0], o2[tg - v0] = best_two(outer)
            f1[v0:v1] = o1 + c[v0:v1]
            f2[v0:v1] = o2 + c[v0:v1]
            p1[v0:v1] = oj
            tg = inner[2]
            r = tg - v0
            a1, aj, a2 = o1[r], oj[r], o2[r]
            for _ in range(sweeps):
                # merge the inner arcs' best two with the outer ones (exact for "best with another job")
                m1, bj, m2 = best_two(inner)
                outer_first = a1 <= m1
                f1[tg] = np.where(outer_first, a1, m1) + c[tg]
                p1[tg] = np.where(outer_first, aj, bj)
                f2[tg] = np.where(outer_first, np.minimum(a2, np.where(bj != aj, m1, m2)),
                                  np.minimum(m2, np.where(aj != bj, a1, a2))) + c[tg]
        lo, hi = self.time_ptr[self.T], self.time_ptr[self.T + 1]
        if hi > lo:
            last = lo + int(np.argmin(f1[lo:hi]))
            value = float(f1[last])
        else:
            last, value = -1, INF
        bound = value + float(np.sum(mu)) if math.isfinite(value) else INF
        return Forward(f1, p1, f2, value, bound, last)

    def backward(self, mu: np.ndarray) -> Backward:
        """Shortest paths to ``T`` (see :class:`Backward`); index ``N`` is the start."""
        N = self.N
        c = np.concatenate([self.node_costs(mu), [0.0]])
        b1 = np.full(N + 1, INF)
        b2 = np.full(N + 1, INF)
        s1 = np.full(N + 1, -3, dtype=np.int64)
        endn = self.node_t == self.T
        b1[:N][endn] = 0.0
        s1[:N][endn] = -2
        order, ptr = self.by_src, self.out_ptr
        tgt, tjob = self.arc_tgt, self.arc_tgtjob
        blocks = list(self.bblocks) + [(N, N + 1, 1)]
        for u0, u1, sweeps in blocks:
            arcs = order[ptr[u0]:ptr[u1]]
            if len(arcs) == 0:
                continue
            cnt = np.diff(ptr[u0:u1 + 1])
            nz = cnt > 0
            seg = (ptr[u0:u1] - ptr[u0])[nz]
            cntz = cnt[nz]
            us = np.arange(u0, u1)[nz]
            v = tgt[arcs]
            vj = tjob[arcs]
            ujob = np.where(us == N, -1, self.node_k[np.minimum(us, max(N - 1, 0))])
            ujob = np.where(ujob == self.jobs, -4, ujob)
            ujr = np.repeat(ujob, cntz)
            for _ in range(sweeps):
                val = c[v] + np.where(s1[v] == ujr, b2[v], b1[v])
                m1 = np.minimum.reduceat(val, seg)
                pos = np.minimum.reduceat(np.where(val == np.repeat(m1, cntz), np.arange(len(v)), _BIG), seg)
                bj = np.where(pos == _BIG, -3, vj[np.minimum(pos, len(vj) - 1)])
                val2 = np.where(vj == np.repeat(bj, cntz), INF, val)
                m2 = np.minimum.reduceat(val2, seg)
                b1[us] = m1
                b2[us] = m2
                s1[us] = bj
        return Backward(b1, s1, b2)

    def through(self, fw: Forward, bw: Backward) -> np.ndarray:
        """Cheapest path through each node (``N`` values, without ``sum(mu)``)."""
        N = self.N
        f1, f2, p1 = fw.f1[:N], fw.f2[:N], fw.p1[:N]
        b1, b2, s1 = bw.b1[:N], bw.b2[:N], bw.s1[:N]
        return np.where(p1 != s1, f1 + b1, np.minimum(f1 + b2, f2 + b1))

    def arc_through(self, fw: Forward, bw: Backward, mu: np.ndarray) -> np.ndarray:
        """Cheapest path through each arc (without ``sum(mu)``)."""
        N = self.N
        u, v = self.arc_src, self.arc_tgt
        uj, vj = self.arc_srcjob, self.arc_tgtjob
        fu = np.where(fw.p1[u] == vj, fw.f2[u], fw.f1[u])
        cv = self.node_costs(mu)[v]
        bv = np.where(bw.s1[v] == uj, bw.b2[v], bw.b1[v])
        return fu + cv + bv

    def eliminate(self, mu: np.ndarray, threshold: float, fw: Forward | None = None,
                  bw: Backward | None = None) -> int:
        """Remove every arc (and then node) whose cheapest path costs more than
        ``threshold`` (in true cost units, ``sum(mu)`` included). Returns the
        number of nodes removed."""
        fw = self.forward(mu) if fw is None else fw
        bw = self.backward(mu) if bw is None else bw
        shift = float(np.sum(mu))
        keep = self.arc_through(fw, bw, mu) + shift <= threshold
        before = self.N
        if keep.all():
            return 0
        self.set_arcs(self.arc_src[keep], self.arc_tgt[keep], on_paths=True)
        return before - self.N

    def path(self, fw: Forward, start: int | None = None) -> list[tuple[int, int]]:
        """The shortest path of ``fw`` as ``(job, completion time)`` pairs in time order.

        Walks back from the end: at each node it picks an incoming arc that
        realises the label being followed (``f1``, or ``f2`` = the best arc
        from a job other than ``p1``) and follows the label of the source
        that the 2-cycle rule allows.
        """
        N = self.N
        v = fw.last if start is None else start
        if v < 0 or not math.isfinite(fw.f1[v]):
            return []
        f1, f2, p1 = fw.f1, fw.f2, fw.p1
        out = []
        which = 1
        while v != N:
            out.append((int(self.node_k[v]), int(self.node_t[v])))
            a0, a1 = self.in_ptr[v], self.in_ptr[v + 1]
            u = self.arc_src[a0:a1]
            vj = self.arc_tgtjob[a0]
            val = np.where(p1[u] == vj, f2[u], f1[u])
            if which == 2:
                val = np.where(self.arc_srcjob[a0:a1] == p1[v], INF, val)
            u = int(u[int(np.argmin(val))])
            if u != N:
                which = 2 if p1[u] == vj else 1
            v = u
        return out[::-1]

    def counts(self, path) -> np.ndarray:
        """How often each job occurs on a path."""
        counts = np.bincount(np.array([j for j, _ in path], dtype=np.int64), minlength=self.n)
        return counts[:self.jobs]
