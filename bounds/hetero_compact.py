"""The reduced network of one machine as a list of states and arcs, for the multiplier passes.

Once the eliminations of the Lagrangian relaxation (Tanaka, Fujikuma &
Araki, "An exact algorithm for single-machine scheduling without machine
idle time", J. Scheduling 2009, Sec. 4) have removed most states of a
:class:`bounds.hetero_dp.Grid`, a pass over the dense grid still reads the
bit sets of every state and gathers the labels of its predecessors from
rows of ``n`` jobs, most of them dead. :class:`Compact` keeps the same
relaxation (no job twice in a row, no 2-cycle, the arcs the grid's
adjacency rule and eliminations left) as the live states in time order and
one predecessor index per arc, so that a pass touches only live labels.
It makes the same passes as the grid (same values, same relaxed paths: the
predecessors are visited in the grid's bit order and ties go the same way)
and eliminates into the grid's own ``alive`` and ``mask``; while the arcs
would take more memory than the grid's bit sets (the whole network, before
the first elimination) it passes the calls to the grid.

Examples
--------
>>> from bounds.hetero_ti import tardiness_costs
>>> from bounds.hetero_dp import Grid
>>> p, w, d = np.array([3, 2, 4]), np.array([2, 1, 3]), np.array([4, 3, 5])
>>> c = Compact(Grid(p, tardiness_costs(p, w, d), weights=w))
>>> fw = c.forward(np.zeros(3)); c.path(fw), fw.value, c.compact
([(2, 4), (0, 7), (1, 9)], 12.0, True)
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from bounds.hetero_dp import Grid, GridForward, lowest_bit
from bounds.hetero_bundle import optimize as bundle_optimize
from bounds.hetero_subgradient import Relaxation, optimize
from bounds.hetero_ti import INF
from instances import options as opt
from instances.options import known_options

__all__ = ["Compact", "optimize_grid"]

#: The multiplier searches :func:`optimize_grid` offers.
METHODS = ("subgradient", "bundle")
#: Bytes of arc list allowed per byte of the grid's bit sets; above it the passes stay on the grid.
ARC_MEMORY = 1.0


@njit(cache=True)
def _count(p, alive, mask, limit):
    """Live states and arcs into them (arcs from live states only); ``-1`` arcs once past ``limit``."""
    T1, n = alive.shape
    W = mask.shape[2]
    N = 0
    A = 0
    for t in range(1, T1):
        for j in range(n):
            if not alive[t, j]:
                continue
            N += 1
            s = t - p[j]
            if s <= 0:
                continue
            for w in range(W):
                x = mask[t, j, w]
                while x != 0:
                    i = w * 64 + lowest_bit(x)
                    x &= x - np.uint64(1)
                    if alive[s, i]:
                        A += 1
            if A > limit:
                return N, -1
    return N, A


@njit(cache=True)
def _layout(p, alive, mask, st_t, st_j, start, pred, idx):
    """Fill the state list (time order, then job) and each state's predecessors (the grid's bit order)."""
    T1, n = alive.shape
    W = mask.shape[2]
    k = 0
    for t in range(1, T1):
        for j in range(n):
            if alive[t, j]:
                idx[t, j] = k
                k += 1
    k = 0
    a = 0
    for t in range(1, T1):
        for j in range(n):
            if not alive[t, j]:
                continue
            st_t[k] = t
            st_j[k] = j
            start[k] = a
            s = t - p[j]
            if s > 0:
                for w in range(W):
                    x = mask[t, j, w]
                    while x != 0:
                        i = w * 64 + lowest_bit(x)
                        x &= x - np.uint64(1)
                        if alive[s, i]:
                            pred[a] = idx[s, i]
                            a += 1
            k += 1
    start[k] = a


@njit(cache=True)
def _forward(p, cost, mu, st_t, st_j, start, pred, f1, p1, f2):
    """Forward labels per live state, as :func:`bounds.hetero_dp._forward` on the grid."""
    for k in range(st_t.shape[0]):
        t = st_t[k]
        j = st_j[k]
        cj = cost[t, j] - mu[j]
        if t == p[j]:
            f1[k] = cj
            f2[k] = np.inf
            p1[k] = -1
            continue
        m1 = np.inf
        m2 = np.inf
        bj = -3
        for a in range(start[k], start[k + 1]):
            q = pred[a]
            v = f2[q] if p1[q] == j else f1[q]
            if v < m1:
                m2 = m1
                m1 = v
                bj = st_j[q]
            elif v < m2:
                m2 = v
        f1[k] = m1 + cj
        f2[k] = m2 + cj
        p1[k] = bj


@njit(cache=True)
def _backward(p, cost, mu, T, st_t, st_j, start, pred, b1, s1, b2):
    """Backward labels per live state, as :func:`bounds.hetero_dp._backward`; returns the value at the start."""
    N = st_t.shape[0]
    for k in range(N):
        b1[k] = 0.0 if st_t[k] == T else np.inf
        b2[k] = np.inf
        s1[k] = -2 if st_t[k] == T else -3
    best = np.inf
    for k in range(N - 1, -1, -1):
        if b1[k] == np.inf:
            continue
        t = st_t[k]
        j = st_j[k]
        ck = cost[t, j] - mu[j]
        if t == p[j]:
            v = ck + b1[k]
            if v < best:
                best = v
            continue
        for a in range(start[k], start[k + 1]):
            q = pred[a]
            i = st_j[q]
            v = ck + (b2[k] if s1[k] == i else b1[k])
            if v < b1[q]:
                if s1[q] != j:
                    b2[q] = b1[q]
                b1[q] = v
                s1[q] = j
            elif v < b2[q] and s1[q] != j:
                b2[q] = v
    return best


@njit(cache=True)
def _eliminate(p, cost, mu, alive, mask, st_t, st_j, start, pred, f1, p1, f2, b1, s1, b2, limit, keep):
    """Clear in the grid every arc (then state) whose cheapest path costs more than ``limit``, as
    :func:`bounds.hetero_dp._eliminate`; ``keep[a]`` says whether list arc ``a`` stays. Returns the
    number of states removed and of list arcs dropped."""
    removed = 0
    dropped = 0
    for k in range(st_t.shape[0]):
        t = st_t[k]
        j = st_j[k]
        if not alive[t, j]:
            dropped += start[k + 1] - start[k]
            for a in range(start[k], start[k + 1]):
                keep[a] = False
            continue
        cj = cost[t, j] - mu[j]
        if t == p[j]:
            if cj + b1[k] > limit:
                alive[t, j] = False
                removed += 1
            continue
        left = False
        # the bits are set again for the arcs kept: those into states that were dead at the layout go too
        for w in range(mask.shape[2]):
            mask[t, j, w] = 0
        for a in range(start[k], start[k + 1]):
            q = pred[a]
            i = st_j[q]
            fu = f2[q] if p1[q] == j else f1[q]
            bv = b2[k] if s1[k] == i else b1[k]
            if alive[st_t[q], i] and fu + cj + bv <= limit:
                mask[t, j, i >> 6] |= np.uint64(1) << np.uint64(i & 63)
                keep[a] = True
                left = True
            else:
                keep[a] = False
                dropped += 1
        if not left:
            alive[t, j] = False
            removed += 1
    return removed, dropped


@njit(cache=True)
def _shrink(alive, st_t, st_j, start, pred, keep, new):
    """Filter the list in place after an elimination: the states still alive and the arcs kept, in the
    same order (a kept arc joins two live states); ``new`` is scratch for the states' new indices.
    Returns the new numbers of states and arcs."""
    N = st_t.shape[0]
    m = 0
    for k in range(N):
        if alive[st_t[k], st_j[k]]:
            new[k] = m
            m += 1
        else:
            new[k] = -1
    m = 0
    b = 0
    for k in range(N):
        lo = start[k]
        hi = start[k + 1]
        if new[k] < 0:
            continue
        st_t[m] = st_t[k]
        st_j[m] = st_j[k]
        start[m] = b
        for a in range(lo, hi):
            if keep[a]:
                pred[b] = new[pred[a]]
                b += 1
        m += 1
    start[m] = b
    return m, b


@njit(cache=True)
def _path(p, st_t, st_j, start, pred, f1, p1, f2, klast, out_j, out_t):
    """The shortest path ending at state ``klast``, walked back as :func:`bounds.hetero_dp._path`; returns
    its length (last job first), ``-1`` if a label has no realising arc."""
    k = klast
    which = 1
    n_out = 0
    while True:
        t = st_t[k]
        j = st_j[k]
        out_j[n_out] = j
        out_t[n_out] = t
        n_out += 1
        if t - p[j] <= 0:
            break
        best = np.inf
        bq = -1
        for a in range(start[k], start[k + 1]):
            q = pred[a]
            if which == 2 and st_j[q] == p1[k]:
                continue
            v = f2[q] if p1[q] == j else f1[q]
            if v < best:
                best = v
                bq = q
        if bq < 0:
            return -1
        which = 2 if p1[bq] == j else 1
        k = bq
    return n_out


class Compact:
    """The passes of a :class:`~bounds.hetero_dp.Grid` over its live states only.

    The interface of the grid that :func:`bounds.hetero_subgradient.optimize`
    uses (``forward``, ``path``, ``counts``, ``eliminate``, ``capped``);
    the grid's ``alive`` and ``mask`` stay the network (eliminations go
    there, and after each the list keeps exactly the states and arcs
    left, also when arcs went without a state: an arc cleared in the grid
    but still in the list would be relaxed by the passes and set again in
    the grid by the next elimination). Meant for one
    multiplier search: a change made to the grid by anything else during
    the search is not seen.

    Parameters
    ----------
    grid
        The network.
    arc_memory
        Bytes of arc list (4 per arc) allowed per byte of the grid's bit
        sets: above that the calls go to the grid itself.
    """

    @known_options
    def __init__(self, grid: Grid, arc_memory: float = ARC_MEMORY):
        self.grid = grid
        self.p, self.cost, self.T, self.n, self.jobs = grid.p, grid.cost, grid.T, grid.n, grid.jobs
        self.limit = int(arc_memory * grid.mask.nbytes / 4)
        self.compact = False
        self._lay()

    @property
    def capped(self) -> bool:
        return self.grid.capped

    @property
    def N(self) -> int:
        """Number of states left."""
        return self.grid.N

    def arcs(self) -> int:
        """Number of arcs the passes relax (the start's arcs not counted): the grid's, exactly."""
        return len(self.pred) if self.compact else self.grid.arcs()

    def _lay(self) -> None:
        g = self.grid
        N, A = _count(g.p, g.alive, g.mask, self.limit)
        self.compact = A >= 0
        if not self.compact:
            self.st_t = self.st_j = self.start = self.pred = None
            return
        self.st_t = np.empty(N, dtype=np.int64)
        self.st_j = np.empty(N, dtype=np.int64)
        self.start = np.empty(N + 1, dtype=np.int64)
        self.pred = np.empty(A, dtype=np.int32)
        _layout(g.p, g.alive, g.mask, self.st_t, self.st_j, self.start, self.pred,
                np.empty(g.alive.shape, dtype=np.int32))
        self.ends = np.flatnonzero(self.st_t == self.T)

    def forward(self, mu) -> GridForward:
        """Shortest paths from time 0 with 2-cycle elimination (labels per live
        state; ``last`` the job ending the path, ``state`` its index)."""
        if not self.compact:
            return self.grid.forward(mu)
        mu = np.ascontiguousarray(mu, dtype=float)
        N = len(self.st_t)
        f1, p1, f2 = np.empty(N), np.empty(N, dtype=np.int64), np.empty(N)
        _forward(self.p, self.cost, mu, self.st_t, self.st_j, self.start, self.pred, f1, p1, f2)
        fw = GridForward(f1, p1, f2, INF, INF, -1)
        fw.state = -1
        if len(self.ends):
            k = int(self.ends[np.argmin(f1[self.ends])])
            if math.isfinite(f1[k]):
                fw.value, fw.last, fw.state = float(f1[k]), int(self.st_j[k]), k
                fw.bound = fw.value + float(np.sum(mu))
        return fw

    def path(self, fw: GridForward) -> list[tuple[int, int]]:
        """The shortest path of ``fw`` as ``(job, completion time)`` pairs in time order."""
        if not hasattr(fw, "state"):
            return self.grid.path(fw)
        if fw.state < 0:
            return []
        out_j = np.empty(self.T + 1, dtype=np.int64)
        out_t = np.empty(self.T + 1, dtype=np.int64)
        k = _path(self.p, self.st_t, self.st_j, self.start, self.pred, fw.f1, fw.p1, fw.f2, fw.state, out_j, out_t)
        if k < 0:  # pragma: no cover - labels always have a realising arc
            raise RuntimeError("no arc realises a forward label")
        return list(zip(out_j[:k][::-1].tolist(), out_t[:k][::-1].tolist()))

    def counts(self, path) -> np.ndarray:
        """How often each job occurs on a path."""
        return self.grid.counts(path)

    def eliminate(self, mu, threshold: float, fw: GridForward | None = None, bw=None) -> int:
        """Remove from the grid every arc and state whose cheapest path costs more
        than ``threshold`` (``sum(mu)`` included), then keep in the list only
        the states and arcs left; returns the number of states removed."""
        if not self.compact:
            removed = self.grid.eliminate(mu, threshold, fw=fw if fw is not None and not hasattr(fw, "state")
                                          else None)
            self._lay()   # the arcs left may now fit the memory allowed
            return removed
        mu = np.ascontiguousarray(mu, dtype=float)
        fw = self.forward(mu) if fw is None or not hasattr(fw, "state") else fw
        N = len(self.st_t)
        b1, s1, b2 = np.empty(N), np.empty(N, dtype=np.int64), np.empty(N)
        _backward(self.p, self.cost, mu, self.T, self.st_t, self.st_j, self.start, self.pred, b1, s1, b2)
        g = self.grid
        keep = np.empty(len(self.pred), dtype=np.bool_)
        removed, dropped = _eliminate(self.p, self.cost, mu, g.alive, g.mask, self.st_t, self.st_j, self.start,
                                      self.pred, fw.f1, fw.p1, fw.f2, b1, s1, b2, threshold - float(np.sum(mu)),
                                      keep)
        # the list must stay the grid's arcs exactly: an arc cleared without its state (no state removed) would
        # otherwise still be relaxed here, and set again in the grid by the next elimination
        if removed or dropped:
            m, a = _shrink(g.alive, self.st_t, self.st_j, self.start, self.pred, keep, np.empty(N, dtype=np.int64))
            self.st_t, self.st_j = self.st_t[:m], self.st_j[:m]
            self.start, self.pred = self.start[:m + 1], self.pred[:a]
            self.ends = np.flatnonzero(self.st_t == self.T)
        return int(removed)


def optimize_grid(net: Grid, upper: float, method: str = "subgradient", **options) -> Relaxation:
    """The multiplier search on ``net`` with its passes over the live states (:class:`Compact`: the same
    passes); the result names the grid itself as its network, which holds the eliminations.

    ``method`` ``"subgradient"`` is :func:`bounds.hetero_subgradient.optimize`, ``"bundle"`` the proximal
    bundle method :func:`bounds.hetero_bundle.optimize`; ``options`` are the chosen function's."""
    method = opt.choice(method, METHODS, "method")
    search = bundle_optimize if method == "bundle" else optimize
    out = search(Compact(net), upper, **options)
    out.network = net
    return out
