"""State-space modifiers for the exact single-machine method (successive sublimation).

Tanaka, Fujikuma & Araki, "An exact algorithm for single-machine scheduling
without machine idle time" (J. Scheduling 2009), Sec. 5: the Lagrangian
relaxation on :class:`bounds.hetero_dp.Grid` made exact job by job. The
modifier jobs are tracked in the labels of forward and backward passes, so
that the relaxation schedules each of them exactly once; each pass is pruned
by the other direction's labels and clears the arcs and states no surviving
label used. Used only by :mod:`milp.hetero_ssdp`.

The passes are compiled (numba). A label of state ``(t, j)`` is the set
``S`` of modifier jobs done (forward: up to and including ``j``; backward:
strictly after it) with the best value and its neighbour job, and the best
value with another neighbour (2-cycle elimination). The labels of a state
are stored contiguously, sorted by ``S``, so the other direction finds the
complementary label by binary search. A set of up to 62 modifiers is one
``int64`` (the kernels here); more modifiers, up to ``MAX_MODIFIERS``, make
it a row of words (the kernels of :mod:`milp.hetero_labels`). A pass runs
in chunks of time steps so that Python can check the deadline and grow the
label arrays.

Examples
--------
>>> from bounds.hetero_dp import Grid
>>> from bounds.hetero_ti import tardiness_costs
>>> p, w, d = np.array([3, 2, 4]), np.array([2, 1, 3]), np.array([4, 3, 5])
>>> search = ModifierSearch(Grid(p, tardiness_costs(p, w, d)), np.zeros(3), 12.5)
>>> search.add(range(3)); result = search.forward()
>>> result.value, [j for j, _ in result.path]
(12.0, [0, 2, 1])
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from bounds.hetero_dp import Grid, lowest_bit, njit
from bounds.hetero_ti import INF
from instances.options import known_options
from milp import hetero_labels as wide
from milp.hetero_labels import WORD_BITS, _sorted, widen, words_for

__all__ = ["ModifierSearch", "ModifierPass", "Labels", "MAX_MODIFIERS"]

#: Words of a label's modifier set at most (:mod:`milp.hetero_labels`); at most this many modifier jobs.
MAX_WORDS = 8
MAX_MODIFIERS = WORD_BITS * MAX_WORDS
#: Time steps of one compiled call between two deadline checks.
_CHUNK = 256
_GOLD = np.uint64(11400714819323198485)


@dataclass
class Labels:
    """The labels of one modifier pass: per state ``lo[t, j]:hi[t, j]`` into the
    arrays, sorted by the modifier set ``S``; ``v1``/``j1`` the best value and
    its neighbour job (predecessor forward, successor backward), ``v2`` the best
    with another neighbour, ``ptr1``/``ptr2`` the labels they extend (``-1``:
    the start or the end); ``nmod`` the modifier jobs (a prefix of the
    search's list) the pass tracked."""

    lo: np.ndarray
    hi: np.ndarray
    S: np.ndarray
    v1: np.ndarray
    j1: np.ndarray
    v2: np.ndarray
    ptr1: np.ndarray
    ptr2: np.ndarray
    node: np.ndarray
    size: int
    nmod: int


@dataclass
class ModifierPass:
    """Outcome of one modifier pass: ``value`` the cheapest relaxed path that
    survived (``inf``: none, i.e. no schedule costs ``<= threshold``),
    ``bound`` = value + sum(mu), its ``path``, ``labels`` created, and
    ``aborted`` when the label limit or the deadline stopped the pass (nothing
    is known then)."""

    value: float
    bound: float
    path: list
    labels: int
    aborted: bool


@dataclass
class _Layout:
    """The modifier sets of one pass: ``K`` words a set (0: one int64, the fast kernels),
    ``m`` modifiers, per job its word ``bw`` and bit ``bb``, the bits that must come
    before (``req``) and after (``forb``) it, and the set of every modifier (``full``)."""

    K: int
    m: int
    bw: np.ndarray
    bb: np.ndarray
    req: np.ndarray
    forb: np.ndarray
    full: object


def _set_mask(m: int, K: int, word_bits: int):
    """The set of the first ``m`` modifiers: an int (``K = 0``) or a ``K``-word row."""
    if K == 0:
        return np.int64((1 << m) - 1)
    c = np.clip(m - word_bits * np.arange(K), 0, word_bits)
    return np.array([(1 << int(x)) - 1 for x in c], dtype=np.int64)


def _rows_equal(S: np.ndarray, key) -> np.ndarray:
    """Which sets of ``S`` (ints or rows) equal ``key``."""
    eq = S == key
    return eq.all(axis=1) if S.ndim == 2 else eq


@njit(cache=True)
def _hash_slot(key, stamp, tstamp, tslot, tS, bits):
    """Slot of ``key`` in the open-addressing table (``-1 - position`` if new)."""
    size = tstamp.shape[0]
    h = np.int64((np.uint64(key) * _GOLD) >> np.uint64(64 - bits))
    while tstamp[h] == stamp:
        k = tslot[h]
        if tS[k] == key:
            return k
        h = (h + 1) & (size - 1)
    return -1 - h


@njit(cache=True)
def _find(S, lo, hi, key):
    """Position of ``key`` in the sorted ``S[lo:hi]``, or -1."""
    a, b = lo, hi
    while a < b:
        m = (a + b) >> 1
        if S[m] < key:
            a = m + 1
        else:
            b = m
    if a < hi and S[a] == key:
        return a
    return -1


@njit(cache=True)
def _emit(t, j, n, ns, tS, tv1, tj1, tp1, tv2, tp2, lo, hi, S, v1, j1, v2, ptr1, ptr2, node, size):
    """Append the ``ns`` slots of state ``(t, j)`` sorted by set; returns the new size."""
    # one-word sets sorted as rows of one word: the merge sort of the wide sets (not np.argsort, whose compiled
    # quicksort is a large share of each fresh checkout's compile)
    order = _sorted(tS[:ns].reshape((ns, 1)), ns)
    lo[t, j] = size
    for q in range(ns):
        k = order[q]
        S[size] = tS[k]
        v1[size] = tv1[k]
        j1[size] = tj1[k]
        v2[size] = tv2[k]
        ptr1[size] = tp1[k]
        ptr2[size] = tp2[k]
        node[size] = t * n + j
        size += 1
    hi[t, j] = size
    return size


@njit(cache=True)
def _insert(key, val, nb, lab, stamp, tstamp, tslot, tS, tv1, tj1, tp1, tv2, tp2, bits, ns):
    """Offer a candidate to the state's table; returns the new slot count (-1: table full)."""
    h = _hash_slot(key, stamp, tstamp, tslot, tS, bits)
    if h < 0:
        if ns >= tS.shape[0]:
            return -1
        pos = -1 - h
        tstamp[pos] = stamp
        tslot[pos] = ns
        tS[ns] = key
        tv1[ns] = val
        tj1[ns] = nb
        tp1[ns] = lab
        tv2[ns] = np.inf
        tp2[ns] = -1
        return ns + 1
    k = h
    if val < tv1[k]:
        if tj1[k] != nb:
            tv2[k] = tv1[k]
            tp2[k] = tp1[k]
        tv1[k] = val
        tj1[k] = nb
        tp1[k] = lab
    elif nb != tj1[k] and val < tv2[k]:
        tv2[k] = val
        tp2[k] = lab
    return ns


@njit(cache=True)
def _forward_steps(t0, t1, p, cost, mu, alive, mask, bit, req, forb, limit, mode, qb1, qs1, qb2,
                   olo, ohi, oS, ov1, oj1, ov2, omask,
                   lo, hi, S, v1, j1, v2, ptr1, ptr2, node, size, used,
                   tstamp, tslot, tS, tv1, tj1, tp1, tv2, tp2, bits, stamp):
    """Forward labels of the time steps ``t0 .. t1 - 1``.

    Returns ``(status, t, size, stamp)``: status 0 done, 1 label arrays full
    at step ``t``, 2 a state's table full at step ``t`` (the step's labels are
    then dropped; the caller grows the arrays and resumes at ``t``)."""
    T1, n = cost.shape
    W = mask.shape[2]
    cap = S.shape[0]
    for t in range(t0, t1):
        start = size
        for j in range(n):
            lo[t, j] = size
            hi[t, j] = size
            if not alive[t, j]:
                continue
            s = t - p[j]
            cj = cost[t, j] - mu[j]
            bj = bit[j]
            rj = req[j]
            fj = forb[j]
            stamp += 1
            ns = np.int64(0)   # typed: a literal 0 compiles a second copy of _insert and _emit
            if s == 0:
                if req[j] != 0:
                    continue
                if mode == 0:
                    rest = qb1[t, j]
                else:
                    r = _find(oS, olo[t, j], ohi[t, j], ~bj & omask)
                    rest = np.inf if r < 0 else ov1[r]
                if cj + rest <= limit:
                    ns = _insert(bj, cj, np.int64(-1), np.int64(-1), stamp, tstamp, tslot, tS, tv1, tj1, tp1,
                                 tv2, tp2, bits, ns)
            else:
                for w in range(W):
                    x = mask[t, j, w]
                    while x != 0:
                        i = w * 64 + lowest_bit(x)
                        x &= x - np.uint64(1)
                        hit = False
                        rest_i = 0.0
                        if mode == 0:
                            rest_i = qb2[t, j] if qs1[t, j] == i else qb1[t, j]
                        for lab in range(lo[s, i], hi[s, i]):
                            Sl = S[lab]
                            if Sl & bj:
                                continue
                            S2 = Sl | bj
                            if (S2 & rj) != rj or (S2 & fj) != 0:
                                continue
                            val = (v2[lab] if j1[lab] == j else v1[lab]) + cj
                            if mode == 0:
                                rest = rest_i
                            else:
                                r = _find(oS, olo[t, j], ohi[t, j], ~S2 & omask)
                                if r < 0:
                                    continue
                                rest = ov2[r] if oj1[r] == i else ov1[r]
                            if val + rest > limit:
                                continue
                            ns = _insert(S2, val, i, lab, stamp, tstamp, tslot, tS, tv1, tj1, tp1, tv2, tp2,
                                         bits, ns)
                            if ns < 0:
                                return 2, t, start, stamp
                            hit = True
                        if hit:
                            used[t, j, w] |= np.uint64(1) << np.uint64(i & 63)
            if ns < 0:
                return 2, t, start, stamp
            if ns > 0:
                if size + ns > cap:
                    return 1, t, start, stamp
                size = _emit(t, j, n, ns, tS, tv1, tj1, tp1, tv2, tp2, lo, hi, S, v1, j1, v2, ptr1, ptr2,
                             node, size)
    return 0, t1, size, stamp


@njit(cache=True)
def _backward_steps(t_hi, t_lo, p, cost, mu, alive, mask, bit, req, forb, limit, mode, qf1, qp1, qf2,
                    olo, ohi, oS, ov1, oj1, ov2, omask,
                    lo, hi, S, v1, j1, v2, ptr1, ptr2, node, size, used,
                    tstamp, tslot, tS, tv1, tj1, tp1, tv2, tp2, bits, stamp):
    """Backward labels of the time steps ``t_hi`` down to ``t_lo + 1`` (see
    :func:`_forward_steps`; the sets hold the modifier jobs strictly after the state)."""
    T1, n = cost.shape
    T = T1 - 1
    cap = S.shape[0]
    for t in range(t_hi, t_lo, -1):
        start = size
        for j in range(n):
            lo[t, j] = size
            hi[t, j] = size
            if not alive[t, j]:
                continue
            rj = req[j]
            fj = forb[j]
            stamp += 1
            ns = np.int64(0)
            for k in range(n):
                t2 = t + p[k]
                if t2 > T or not alive[t2, k]:
                    continue
                if not (mask[t2, k, j >> 6] >> np.uint64(j & 63)) & np.uint64(1):
                    continue
                ck = cost[t2, k] - mu[k]
                bk = bit[k]
                before_k = 0.0
                if mode == 0:
                    before_k = qf2[t, j] if qp1[t, j] == k else qf1[t, j]
                hit = False
                for lab in range(lo[t2, k], hi[t2, k]):
                    R = S[lab]
                    if R & bk:
                        continue
                    R2 = R | bk
                    if (R2 & fj) != fj or (R2 & rj) != 0:
                        continue
                    val = ck + (v2[lab] if j1[lab] == j else v1[lab])
                    if mode == 0:
                        before = before_k
                    else:
                        r = _find(oS, olo[t, j], ohi[t, j], ~R2 & omask)
                        if r < 0:
                            continue
                        before = ov2[r] if oj1[r] == k else ov1[r]
                    if val + before > limit:
                        continue
                    ns = _insert(R2, val, k, lab, stamp, tstamp, tslot, tS, tv1, tj1, tp1, tv2, tp2, bits, ns)
                    if ns < 0:
                        return 2, t, start, stamp
                    hit = True
                if hit:
                    used[t2, k, j >> 6] |= np.uint64(1) << np.uint64(j & 63)
            if ns > 0:
                if size + ns > cap:
                    return 1, t, start, stamp
                size = _emit(t, j, n, ns, tS, tv1, tj1, tp1, tv2, tp2, lo, hi, S, v1, j1, v2, ptr1, ptr2,
                             node, size)
    return 0, t_lo, size, stamp


class _Arrays:
    """Growable label arrays and the per-state hash table of one pass."""

    #: first size of the label arrays and of a state's table (both grow on demand)
    CAP = 1 << 16
    SLOTS = 1 << 10

    def __init__(self, shape, max_labels: int, K: int = 0):
        cap, slots = max(1, min(self.CAP, max_labels)), self.SLOTS
        self.K = K          # 0: one int64 a set; else K-word rows (milp.hetero_labels)
        self.lo = np.zeros(shape, dtype=np.int64)
        self.hi = np.zeros(shape, dtype=np.int64)
        self.cap = cap
        self.S = np.zeros(self._rows(cap), dtype=np.int64)
        self.v1 = np.full(cap, INF)
        self.j1 = np.full(cap, -3, dtype=np.int64)
        self.v2 = np.full(cap, INF)
        self.ptr1 = np.full(cap, -1, dtype=np.int64)
        self.ptr2 = np.full(cap, -1, dtype=np.int64)
        self.node = np.full(cap, -1, dtype=np.int64)
        self.size = 0
        self.stamp = 0
        self._table(slots)

    def _table(self, slots: int) -> None:
        self.bits = int(slots).bit_length()          # the table has 2^bits >= 2 slots per entry
        self.tstamp = np.zeros(1 << self.bits, dtype=np.int64)
        self.tslot = np.zeros(1 << self.bits, dtype=np.int64)
        self.tS = np.zeros(self._rows(slots), dtype=np.int64)
        self.tv1 = np.zeros(slots)
        self.tj1 = np.zeros(slots, dtype=np.int64)
        self.tp1 = np.zeros(slots, dtype=np.int64)
        self.tv2 = np.zeros(slots)
        self.tp2 = np.zeros(slots, dtype=np.int64)
        self.stamp = 0

    def _rows(self, count: int):
        return (count, self.K) if self.K else count

    def grow(self, limit: int) -> bool:
        cap = 2 * self.cap
        if cap > limit:
            if self.cap >= limit:
                return False
            cap = limit
        for name in ("S", "v1", "j1", "v2", "ptr1", "ptr2", "node"):
            old = getattr(self, name)
            new = np.empty((cap,) + old.shape[1:], dtype=old.dtype)
            new[:self.size] = old[:self.size]
            setattr(self, name, new)
        self.cap = cap
        return True

    def grow_table(self) -> None:
        self._table(2 * len(self.tS))

    def args(self):
        return (self.lo, self.hi, self.S, self.v1, self.j1, self.v2, self.ptr1, self.ptr2, self.node, self.size)

    def table(self):
        return (self.tstamp, self.tslot, self.tS, self.tv1, self.tj1, self.tp1, self.tv2, self.tp2, self.bits,
                self.stamp)

    def labels(self, nmod: int) -> Labels:
        return Labels(self.lo, self.hi, self.S, self.v1, self.j1, self.v2, self.ptr1, self.ptr2, self.node,
                      self.size, nmod)


class ModifierSearch:
    """Successive sublimation: forward and backward passes of the relaxation
    with state-space modifiers, each pruned by the labels of the last pass in
    the other direction (Tanaka, Fujikuma & Araki 2009, Sec. 5).

    A full path holds every modifier job exactly once, so with every job a
    modifier the relaxation is the problem itself. A label is dropped when
    its value plus the best compatible label of the other direction (or,
    before there is one, the modifier-free bound) exceeds the threshold;
    arcs that carried no surviving label are cleared from the grid.

    Parameters
    ----------
    net
        The (already reduced) :class:`~bounds.hetero_dp.Grid`; it is reduced further in place.
    mu
        Multipliers (kept fixed).
    threshold
        Only schedules of cost ``<= threshold`` (true units, ``sum(mu)``
        included) are of interest.
    """

    #: Modifier jobs per word of a set; beyond one word the sets are rows of words.
    WORD_BITS = WORD_BITS

    @known_options
    def __init__(self, net: Grid, mu: np.ndarray, threshold: float, prec: np.ndarray | None = None):
        self.net = net
        self.prec = None if prec is None else np.asarray(prec, dtype=bool)
        self.mu = np.ascontiguousarray(mu, dtype=float)
        self.shift = float(np.sum(self.mu))
        self.limit = threshold - self.shift
        self.modifiers: list[int] = []
        self.fl: Labels | None = None
        self.bl: Labels | None = None

    @property
    def max_modifiers(self) -> int:
        """Modifier jobs a set can hold."""
        return self.WORD_BITS * MAX_WORDS

    def add(self, jobs) -> None:
        """Append modifier jobs (bits are positions in the list, so old labels stay meaningful)."""
        for j in jobs:
            j = int(j)
            if j not in self.modifiers:
                if len(self.modifiers) >= self.max_modifiers:
                    raise ValueError(f"at most {self.max_modifiers} modifier jobs")
                self.modifiers.append(j)

    def _layout(self) -> _Layout:
        """Where each modifier job's bit lives: one int64 a set up to ``WORD_BITS``
        modifiers (the fast kernels), else ``K``-word rows (:mod:`milp.hetero_labels`)."""
        n, m, wb = self.net.n, len(self.modifiers), self.WORD_BITS
        K = 0 if m <= wb else words_for(m, wb)
        bw = np.zeros(n, dtype=np.int64)
        bb = np.zeros(n, dtype=np.int64)
        for b, j in enumerate(self.modifiers):
            bw[j], bb[j] = b // wb, np.int64(1) << (b % wb)
        # per job the modifier bits that must come before it (req) and after it (forb)
        req = np.zeros((n, max(K, 1)), dtype=np.int64)
        forb = np.zeros_like(req)
        if self.prec is not None and m:
            mods = np.array(self.modifiers, dtype=np.int64)
            rows = np.zeros((m, max(K, 1)), dtype=np.int64)
            rows[np.arange(m), bw[mods]] = bb[mods]
            for j in range(n):
                req[j] = np.bitwise_or.reduce(rows[self.prec[mods, j]], axis=0, initial=0)
                forb[j] = np.bitwise_or.reduce(rows[self.prec[j, mods]], axis=0, initial=0)
        full = _set_mask(m, K, wb)
        if K == 0:
            return _Layout(K, m, bw, bb, np.ascontiguousarray(req[:, 0]), np.ascontiguousarray(forb[:, 0]), full)
        return _Layout(K, m, bw, bb, req, forb, full)

    def _other(self, labels: Labels | None, K: int):
        """The other direction's labels as kernel arguments (mode 1), or placeholders (mode 0)."""
        wb = self.WORD_BITS
        if labels is None:
            z = np.zeros((1, 1), dtype=np.int64)
            e = np.zeros(1, dtype=np.int64)
            oS = e if K == 0 else np.zeros((1, K), dtype=np.int64)
            return 0, (z, z, oS, np.zeros(1), e, np.zeros(1), _set_mask(0, K, wb))
        oS = labels.S if K == 0 else widen(labels.S[:max(labels.size, 1)], K)
        return 1, (labels.lo, labels.hi, oS, labels.v1, labels.j1, labels.v2, _set_mask(labels.nmod, K, wb))

    def _run(self, forward: bool, steps, plain, other, lay: _Layout, arr: _Arrays, used, max_labels, deadline):
        net = self.net
        mode, oargs = self._other(other, lay.K)
        if lay.K == 0:
            kernel, code = (_forward_steps if forward else _backward_steps), (lay.bb,)
        else:
            kernel, code = (wide.forward_steps if forward else wide.backward_steps), (lay.bw, lay.bb)
        for a, b in steps:
            while True:
                if deadline is not None and time.perf_counter() > deadline:
                    return False
                status, t, size, stamp = kernel(a, b, net.p, net.cost, self.mu, net.alive, net.mask, *code,
                                                lay.req, lay.forb, self.limit, mode, *plain, *oargs, *arr.args(),
                                                used, *arr.table())
                arr.size, arr.stamp = size, stamp
                if status == 0:
                    break
                if status == 1 and not arr.grow(max_labels):
                    return False
                if status == 2:
                    arr.grow_table()
                a = t
        return True

    def forward(self, max_labels: int = 3_000_000, deadline: float | None = None) -> ModifierPass:
        """One forward pass with the current modifier jobs (``aborted`` past
        ``max_labels`` labels or the ``time.perf_counter`` value ``deadline``)."""
        net = self.net
        lay = self._layout()
        if self.bl is None:
            bw = net.backward(self.mu)
            plain = (bw.b1, bw.s1, bw.b2)
        else:
            z = np.zeros((1, 1))
            plain = (z, np.zeros((1, 1), dtype=np.int64), z)
        arr = _Arrays(net.cost.shape, max_labels, lay.K)
        used = np.zeros_like(net.mask)
        T = net.T
        steps = [(a, min(a + _CHUNK, T + 1)) for a in range(1, T + 1, _CHUNK)]
        if not self._run(True, steps, plain, self.bl, lay, arr, used, max_labels, deadline):
            return ModifierPass(INF, -INF, [], arr.size, True)
        self.fl = labels = arr.labels(lay.m)
        best, value = -1, INF
        for j in range(net.n):
            lo, hi = labels.lo[T, j], labels.hi[T, j]
            ok = _rows_equal(labels.S[lo:hi], lay.full)
            for lab in lo + np.flatnonzero(ok):
                if labels.v1[lab] < value:
                    best, value = int(lab), float(labels.v1[lab])
        path = []
        if best >= 0:
            lab, which = best, 1
            while lab >= 0:
                t, job = divmod(int(labels.node[lab]), net.n)
                path.append((job, t))
                prev = int(labels.ptr1[lab] if which == 1 else labels.ptr2[lab])
                which = 2 if prev >= 0 and labels.j1[prev] == job else 1
                lab = prev
            path.reverse()
        self._shrink(arr, used)
        return ModifierPass(value, value + self.shift, path, arr.size, False)

    def backward(self, max_labels: int = 3_000_000, deadline: float | None = None) -> ModifierPass:
        """One backward pass (see :meth:`forward`)."""
        net = self.net
        lay = self._layout()
        if self.fl is None:
            fw = net.forward(self.mu)
            plain = (fw.f1, fw.p1, fw.f2)
        else:
            z = np.zeros((1, 1))
            plain = (z, np.zeros((1, 1), dtype=np.int64), z)
        arr = _Arrays(net.cost.shape, max_labels, lay.K)
        used = np.zeros_like(net.mask)
        T, n = net.T, net.n
        # the labels at T: nothing after them
        forb = lay.forb if lay.K == 0 else lay.forb.any(axis=1)
        ends = np.flatnonzero(net.alive[T] & (forb == 0))
        while arr.cap < len(ends):
            arr.grow(max(max_labels, len(ends)))
        for q, j in enumerate(ends):
            arr.S[q], arr.v1[q], arr.j1[q], arr.v2[q] = 0, 0.0, -2, INF
            arr.ptr1[q] = arr.ptr2[q] = -1
            arr.node[q] = T * n + j
            arr.lo[T, j], arr.hi[T, j] = q, q + 1
        arr.size = len(ends)
        steps = [(a, max(a - _CHUNK, 0)) for a in range(T - 1, 0, -_CHUNK)]
        if not self._run(False, steps, plain, self.fl, lay, arr, used, max_labels, deadline):
            return ModifierPass(INF, -INF, [], arr.size, True)
        self.bl = labels = arr.labels(lay.m)
        best, value = -1, INF
        for k in range(n):
            t = int(net.p[k])
            if t > T or not net.alive[t, k]:
                continue
            ck = net.cost[t, k] - self.mu[k]
            # the set after the first job k: every modifier but k itself
            need = lay.full.copy() if lay.K else lay.full
            if lay.K:
                need[lay.bw[k]] &= ~lay.bb[k]
            else:
                need = need & ~int(lay.bb[k])
            lo, hi = labels.lo[t, k], labels.hi[t, k]
            for lab in lo + np.flatnonzero(_rows_equal(labels.S[lo:hi], need)):
                v = ck + labels.v1[lab]
                if v < value:
                    best, value = int(lab), float(v)
        path = []
        if best >= 0:
            lab, which = best, 1
            t, job = divmod(int(labels.node[lab]), n)
            path.append((job, t))
            while True:
                nxt = int(labels.ptr1[lab] if which == 1 else labels.ptr2[lab])
                if nxt < 0:
                    break
                t, nj = divmod(int(labels.node[nxt]), n)
                path.append((nj, t))
                which = 2 if labels.j1[nxt] == job else 1
                job, lab = nj, nxt
        self._shrink(arr, used)
        return ModifierPass(value, value + self.shift, path, arr.size, False)

    def _shrink(self, arr: _Arrays, used: np.ndarray) -> None:
        """Keep only the arcs that carried a surviving label and the states that have one."""
        net = self.net
        has = arr.hi > arr.lo
        net.mask &= used
        net.alive &= has
