"""Time-indexed network of one machine without idle time, and its Lagrangian relaxation.

The engine behind :mod:`bounds.hetero` and the exact method of
:mod:`milp.hetero_ssdp`. A single machine processes ``n`` jobs with integer
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
once (``numpy.minimum.reduceat`` per target) and repeats the block as often
as its longest chain of arcs inside the block requires, so the Python loop
runs over blocks, not over time units.

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
from dataclasses import dataclass

import numpy as np

__all__ = ["Network", "Forward", "Backward", "tardiness_costs", "wspt_rank", "INF"]

INF = math.inf
_BIG = np.iinfo(np.int64).max


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
    cheapest path whose job before the node differs from ``p1``; ``a1``,
    ``a2`` are the arcs that realise them. ``value`` is the shortest path to
    ``T`` (``inf`` when there is none) and ``bound`` = value + sum(mu).
    """

    f1: np.ndarray
    p1: np.ndarray
    f2: np.ndarray
    a1: np.ndarray
    a2: np.ndarray
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
    """

    def __init__(self, p, cost: np.ndarray, rank=None, weights=None, block: int = 24):
        self.p = np.asarray(p, dtype=np.int64)
        self.n = n = len(self.p)
        if n == 0 or (self.p < 1).any():
            raise ValueError("need at least one job and processing times >= 1")
        self.T = T = int(self.p.sum())
        self.cost = np.asarray(cost, dtype=float)
        if self.cost.shape != (T + 1, n):
            raise ValueError(f"cost must have shape {(T + 1, n)}, got {self.cost.shape}")
        if rank is None:
            w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
            rank = wspt_rank(self.p, np.maximum(w, 1e-300))
        self.rank = np.asarray(rank, dtype=np.int64)
        self.block = max(1, int(block))
        t = np.arange(T + 1)[:, None]
        self.alive = np.isfinite(self.cost) & (t >= self.p[None, :])
        self._build()

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
        # candidate sources of each target (k, t): every node at s = t - p_k (the start if s = 0)
        s = tt - p[kk]
        lo = np.where(s > 0, self.time_ptr[np.maximum(s, 0)], N)
        hi = np.where(s > 0, self.time_ptr[np.maximum(s, 0) + 1], N + 1)
        cnt = hi - lo
        tgt = np.repeat(np.arange(N), cnt)
        first = np.repeat(np.cumsum(cnt) - cnt, cnt)
        src = np.repeat(lo, cnt) + (np.arange(len(tgt)) - first)
        keep = self._allowed(src, tgt)
        self._set_arcs(src[keep], tgt[keep])

    def _allowed(self, src: np.ndarray, tgt: np.ndarray) -> np.ndarray:
        """Arcs ``src -> tgt`` that pass the no-repeat and adjacency tests."""
        N, n, p, rank = self.N, self.n, self.p, self.rank
        flat = self.cost.ravel()
        jobx = np.append(self.node_k, -1)
        j = jobx[src]
        k = self.node_k[tgt]
        t = self.node_t[tgt]
        start = j < 0
        ok = start | (j != k)
        real = np.flatnonzero(~start & ok)
        jr, kr, tr = j[real], k[real], t[real]
        pj = p[jr]
        sr_n = (tr - p[kr]) * n
        t_n = tr * n
        lhs = flat[sr_n + jr] + flat[t_n + kr]
        rhs = flat[t_n - pj * n + kr] + flat[t_n + jr]
        bad = (lhs > rhs) | ((lhs == rhs) & (rank[jr] > rank[kr]))
        ok[real[bad]] = False
        return ok

    def _set_arcs(self, src: np.ndarray, tgt: np.ndarray) -> None:
        """Install the arcs (``tgt`` must be non-decreasing), drop the nodes that
        no path from time 0 to ``T`` uses any more, and lay out the blocks."""
        self._index(src, tgt)
        N = self.N
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
        self._blocks()

    def _index(self, src: np.ndarray, tgt: np.ndarray) -> None:
        N = self.N
        self.arc_src, self.arc_tgt = src, tgt
        self.arc_srcjob = np.append(self.node_k, -1)[src]
        self.arc_tgtjob = self.node_k[tgt]
        self.in_ptr = np.searchsorted(tgt, np.arange(N + 1))
        self.by_src = np.argsort(src, kind="stable")
        self.out_ptr = np.searchsorted(src[self.by_src], np.arange(N + 2))

    def _reachable(self) -> np.ndarray:
        """Nodes on some arc path from the start to a node at ``T`` (one sweep each way)."""
        N, T, tp = self.N, self.T, self.time_ptr
        fwd = np.zeros(N + 1, dtype=np.int64)
        fwd[N] = 1
        src, ptr = self.arc_src, self.in_ptr
        for t in range(1, T + 1):
            v0, v1 = tp[t], tp[t + 1]
            if v0 == v1:
                continue
            a0, a1 = ptr[v0], ptr[v1]
            csum = np.concatenate([[0], np.cumsum(fwd[src[a0:a1]])])
            fwd[v0:v1] = (csum[ptr[v0 + 1:v1 + 1] - a0] - csum[ptr[v0:v1] - a0]) > 0
        bwd = np.zeros(N + 1, dtype=np.int64)
        bwd[tp[T]:tp[T + 1]] = 1
        tgt_by_src = self.arc_tgt[self.by_src]
        optr = self.out_ptr
        for t in range(T - 1, 0, -1):
            u0, u1 = tp[t], tp[t + 1]
            if u0 == u1:
                continue
            a0, a1 = optr[u0], optr[u1]
            csum = np.concatenate([[0], np.cumsum(bwd[tgt_by_src[a0:a1]])])
            bwd[u0:u1] = (csum[optr[u0 + 1:u1 + 1] - a0] - csum[optr[u0:u1] - a0]) > 0
        return (fwd[:N] > 0) & (bwd[:N] > 0)

    def _blocks(self) -> None:
        """Time blocks with their node and arc ranges and the number of sweeps
        each needs (1 + the longest chain of arcs inside the block)."""
        T, b = self.T, self.block
        self.fblocks = []   # (v0, v1, sweeps) over targets, increasing time
        self.bblocks = []   # (u0, u1, sweeps) over sources, decreasing time
        node_t = self.node_t
        arc_src_t = np.append(node_t, 0)[self.arc_src]
        arc_tgt_t = node_t[self.arc_tgt]
        for t0 in range(1, T + 1, b):
            t1 = min(T + 1, t0 + b)
            v0, v1 = self.time_ptr[t0], self.time_ptr[t1]
            if v0 == v1:
                continue
            a0, a1 = self.in_ptr[v0], self.in_ptr[v1]
            inner = arc_src_t[a0:a1] >= t0
            sweeps = 1 + self._depth(self.arc_src[a0:a1][inner], self.arc_tgt[a0:a1][inner])
            self.fblocks.append((v0, v1, sweeps))
        # backward: sources in [t0, t1), their arcs reach targets at later times
        for t1 in range(T, 0, -b):
            t0 = max(0, t1 - b)
            u0, u1 = self.time_ptr[t0], self.time_ptr[t1]
            if u0 == u1:
                continue
            arcs = self.by_src[self.out_ptr[u0]:self.out_ptr[u1]]
            inner = arc_tgt_t[arcs] < t1
            sweeps = 1 + self._depth(self.arc_src[arcs][inner], self.arc_tgt[arcs][inner])
            self.bblocks.append((u0, u1, sweeps))

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
        """``cost - mu`` per node."""
        return self.cost[self.node_t, self.node_k] - np.asarray(mu, dtype=float)[self.node_k]

    def forward(self, mu: np.ndarray) -> Forward:
        """Shortest paths from time 0 (2-cycle elimination, see :class:`Forward`)."""
        N = self.N
        c = self.node_costs(mu)
        f1 = np.full(N + 1, INF)
        f2 = np.full(N + 1, INF)
        p1 = np.full(N + 1, -1, dtype=np.int64)
        a1 = np.full(N + 1, -1, dtype=np.int64)
        a2 = np.full(N + 1, -1, dtype=np.int64)
        f1[N] = 0.0
        src, sjob, tjob, ptr = self.arc_src, self.arc_srcjob, self.arc_tgtjob, self.in_ptr
        for v0, v1, sweeps in self.fblocks:
            a0, a1_ = ptr[v0], ptr[v1]
            seg = ptr[v0:v1] - a0
            cnt = np.diff(ptr[v0:v1 + 1])
            u = src[a0:a1_]
            sj = sjob[a0:a1_]
            tj = tjob[a0:a1_]
            idx = np.arange(a0, a1_)
            for _ in range(sweeps):
                val = np.where(p1[u] == tj, f2[u], f1[u])
                m1 = np.minimum.reduceat(val, seg)
                best = np.minimum.reduceat(np.where(val == np.repeat(m1, cnt), idx, _BIG), seg)
                bj = np.where(best == _BIG, -1, sjob[np.minimum(best, len(sjob) - 1)])
                val2 = np.where(sj == np.repeat(bj, cnt), INF, val)
                m2 = np.minimum.reduceat(val2, seg)
                second = np.minimum.reduceat(np.where(val2 == np.repeat(m2, cnt), idx, _BIG), seg)
                f1[v0:v1] = m1 + c[v0:v1]
                f2[v0:v1] = m2 + c[v0:v1]
                p1[v0:v1] = bj
                a1[v0:v1] = best
                a2[v0:v1] = second
        lo, hi = self.time_ptr[self.T], self.time_ptr[self.T + 1]
        if hi > lo:
            last = lo + int(np.argmin(f1[lo:hi]))
            value = float(f1[last])
        else:
            last, value = -1, INF
        bound = value + float(np.sum(mu)) if math.isfinite(value) else INF
        return Forward(f1, p1, f2, a1, a2, value, bound, last)

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
        self._set_arcs(self.arc_src[keep], self.arc_tgt[keep])
        return before - self.N

    def path(self, fw: Forward, start: int | None = None) -> list[tuple[int, int]]:
        """The shortest path of ``fw`` as ``(job, completion time)`` pairs in time order."""
        N = self.N
        v = fw.last if start is None else start
        if v < 0 or not math.isfinite(fw.f1[v]):
            return []
        out = []
        which = 1
        while v != N:
            out.append((int(self.node_k[v]), int(self.node_t[v])))
            arc = fw.a1[v] if which == 1 else fw.a2[v]
            u = int(self.arc_src[arc])
            if u != N:
                which = 1 if fw.p1[u] != self.node_k[v] else 2
            v = u
        return out[::-1]

    def counts(self, path) -> np.ndarray:
        """How often each job occurs on a path."""
        return np.bincount(np.array([j for j, _ in path], dtype=np.int64), minlength=self.n)
