"""ng-route pricing of the heterogeneous-GPU column generation: pseudo-schedules without short cycles.

The pricing network of :mod:`bounds.hetero_pricing` (semi-active
pseudo-schedules of one GPU class on its integer grid, completion of ``k`` at
``t`` costing ``W_k max(0, t - D_k) - pi_k``, the adjacent-pair interchange
rule) with the ng-route memory of Baldacci, Mingozzi and Roberti
("New route relaxation and pricing strategies for the vehicle routing
problem", Operations Research 2011, Sec. 3) in place of 2-cycle elimination:
every task ``k`` has a neighbourhood ``N_k`` (``k`` included); a label
ending with ``k`` after ``j`` remembers

    M_k = {k} U (M_j  intersected with  N_k)

and a task in ``M_j`` may not follow ``j``; as in the plain pricing, no task
follows the task two before it either (no 2-cycle ``k, j, k``, with or
without idle time). A real schedule repeats nothing, so it is never cut off:
the relaxation lies between the plain pricing's and the elementary
schedules, and the minimum reduced cost over it gives a valid Lagrangian
bound. With ``N_k = {k}`` it is the plain pricing's network; with every
task in every neighbourhood, the elementary pseudo-schedules.

Labels: each completion ``(t, k)`` and each idle state ("``k`` completed
before ``t``, the machine idles since") keeps a bucket of at most ``cap``
labels ``(value, memory, task before)``. A label is dominated by one of
no larger value and memory with the same task before it, or by two such
labels with distinct tasks before them (every task the new label may take
next, one of the two may take too: Abdul-Razaq and Potts' argument for
2-cycles). The sources of ``(t, k)`` are scanned in order of their cheapest
label (each time's completions kept in that order as they are made), and
the scan stops once two labels of memory ``{k}`` with distinct tasks
before them are cheaper than the next source (they dominate the rest).
The idle states of a task change only where it completes: one running
bucket per task takes each of its completions' labels, and is stored only
at the arrival times (the only starts after idle time), each idle label
naming the completion label it carries.
Where a bucket overflows, the new label is merged into one of the same task
before it, else into the one whose memory it shares most: the merged label
takes the lower value, that label's path and the intersection of the
memories (the task before it forgotten where the two differ). It forbids
less than either, so the minimum stays a lower bound (its path still has
the label's value; :func:`feasible` may then refuse it; ``merges`` counts
them). A memory is a 16-bit set over ``N_k`` (bit 0 is ``k``).

Examples
--------
>>> import numpy as np
>>> P, A, D = np.array([1, 1, 1]), np.array([2, 0, 2]), np.array([4, 5, 0])
>>> W, pi, alive = np.ones(3), np.array([4.0, 6.0, 4.0]), np.ones((8, 3), bool)
>>> two = forward(P, A, alive, W, D, pi, neighbourhoods(D, 1))     # memory {k}: no 2-cycle only
>>> columns(two, P, W, D, pi, 1)
[(-17.0, [(1, 1), (2, 3), (0, 4), (1, 5)], 3.0)]
>>> full = forward(P, A, alive, W, D, pi, neighbourhoods(D, 3))    # every task remembered: elementary
>>> columns(full, P, W, D, pi, 1)
[(-11.0, [(1, 1), (2, 3), (0, 4)], 3.0)]
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from bounds.hetero_pricing import _insert_in_order, _tard, admit_table, interchange_beats
from instances.options import known_options

__all__ = ["NgLabels", "neighbourhoods", "grow", "feasible", "forward", "columns", "MAX_NG", "CAP"]

#: Largest neighbourhood (bits of a memory).
MAX_NG = 16
#: Labels kept per completion or idle state.
CAP = 16


@known_options
def neighbourhoods(key: np.ndarray, size: int) -> np.ndarray:
    """``(n, MAX_NG)`` table: row ``k`` lists ``N_k`` (``k`` first, then the ``size - 1`` tasks of nearest
    ``key``, e.g. due dates), padded with ``-1``."""
    key = np.asarray(key, float)
    n = len(key)
    size = max(1, min(int(size), MAX_NG, n))
    out = np.full((n, MAX_NG), -1, np.int64)
    for k in range(n):
        d = np.abs(key - key[k])
        d[k] = -1.0
        out[k, :size] = np.argsort(d, kind="stable")[:size]
    return out


@known_options
def grow(N: np.ndarray, seq) -> int:
    """Add the cycles of a pseudo-schedule (tasks in order) to ``N`` in place (dynamic ng-routes, Roberti and
    Mingozzi 2014): for a repeat ``i ... i``, ``i`` joins the neighbourhood of every task between, so the
    cycle is forbidden afterwards. Returns how many entries were added (full rows are left as they are)."""
    added = 0
    last: dict[int, int] = {}
    for b, x in enumerate(seq):
        x = int(x)
        a = last.get(x)
        if a is not None:
            for y in seq[a + 1:b]:
                row = N[int(y)]
                if x not in row:
                    free = np.flatnonzero(row < 0)
                    if len(free):
                        row[free[0]] = x
                        added += 1
        last[x] = b
    return added


@known_options
def feasible(N: np.ndarray, seq) -> bool:
    """Whether a sequence of tasks is allowed by the memory rule of the module docstring (ng memories of
    ``N``, no task twice in a row nor in a 2-cycle)."""
    mem: set[int] = set()
    last = before = -1
    for x in seq:
        x = int(x)
        if x in mem or x == before:
            return False
        mem = {x} | (mem & set(N[x][N[x] >= 0].tolist()))
        last, before = x, last
    return True


@dataclass
class NgLabels:
    """Labels of one ng pricing pass: ``df1[t, k]`` the cheapest label of completion ``(t, k)`` (``inf``:
    none; column ``n`` unused), ``best``/``best_t``/``best_l`` the cheapest label of each task, and the
    arrays :func:`columns` traces."""

    df1: np.ndarray
    best: np.ndarray
    best_t: np.ndarray
    best_l: np.ndarray
    arrays: tuple
    merges: int

    @property
    def value(self) -> float:
        """The cheapest pseudo-schedule's value (the empty one, 0, included)."""
        return float(min(0.0, self.best.min())) if len(self.best) else 0.0


@numba.njit(cache=True, inline="always")
def _popcount(x):
    x = np.int64(x)
    c = 0
    while x:
        x &= x - 1
        c += 1
    return c


@numba.njit(cache=True, inline="always")
def _covered(val, mem, prd, t, k, q, m, p):
    """Whether label ``q`` of bucket ``(t, k)`` is dominated by another of its first ``m`` labels whose task
    before it is not ``p``."""
    for r in range(m):
        if r != q and prd[t, k, r] != p and val[t, k, r] <= val[t, k, q] and (mem[t, k, r] & ~mem[t, k, q]) == 0:
            return True
    return False


@numba.njit(cache=True)
def _offer(cnt, val, mem, prd, a, b, c, t, k, v, bits, p, pa, pb, pc, cap):
    """Offer a label (value ``v``, memory ``bits``, task before ``p``; pointer fields ``pa``, ``pb``, ``pc``)
    to bucket ``(t, k)``; 1 if it had to be merged."""
    m = cnt[t, k]
    # dominated: by a label of the same task before it, or by two with distinct tasks before them (each
    # extension the new label allows, one of the two allows too: Abdul-Razaq and Potts' argument)
    other = -2
    for q in range(m):
        if val[t, k, q] <= v and (mem[t, k, q] & ~bits) == 0:
            if prd[t, k, q] == p:
                return 0
            if other == -2:
                other = prd[t, k, q]
            elif prd[t, k, q] != other:
                return 0
    q = 0
    while q < m:
        # dominated by the new label alone (same task before), or with another of a distinct task before
        if v <= val[t, k, q] and (bits & ~mem[t, k, q]) == 0 and (
                p == prd[t, k, q] or _covered(val, mem, prd, t, k, q, m, p)):
            m -= 1          # the last one takes its place
            val[t, k, q] = val[t, k, m]
            mem[t, k, q] = mem[t, k, m]
            prd[t, k, q] = prd[t, k, m]
            a[t, k, q] = a[t, k, m]
            b[t, k, q] = b[t, k, m]
            c[t, k, q] = c[t, k, m]
            continue
        q += 1
    if m < cap:
        val[t, k, m] = v
        mem[t, k, m] = bits
        prd[t, k, m] = p
        a[t, k, m] = pa
        b[t, k, m] = pb
        c[t, k, m] = pc
        cnt[t, k] = m + 1
        return 0
    # full: merge into a label of the same task before it, else the one sharing most of the memory (a
    # relaxation: the intersection forbids less; different tasks before: the merged one forbids neither)
    r = 0
    score = -1
    for q in range(m):
        sc = _popcount(mem[t, k, q] & bits) + (MAX_NG + 1 if prd[t, k, q] == p else 0)
        if sc > score:
            score = sc
            r = q
    mem[t, k, r] &= bits
    if prd[t, k, r] != p:
        prd[t, k, r] = -1
    if v < val[t, k, r]:
        val[t, k, r] = v
        a[t, k, r] = pa
        b[t, k, r] = pb
        c[t, k, r] = pc
    cnt[t, k] = m
    return 1


@numba.njit(cache=True, inline="always")
def _extend(N, pos, j, bits, k):
    """Memory of a label ending with ``j`` extended by ``k`` (ng rule); -1 where ``k`` is remembered."""
    pkj = pos[j, k]
    if pkj >= 0 and (bits >> pkj) & 1:
        return -1
    nb = 1
    for r in range(MAX_NG):
        x = N[j, r]
        if x < 0:
            break
        if (bits >> r) & 1 and pos[k, x] >= 0:
            nb |= 1 << pos[k, x]
    return nb


@numba.njit(cache=True)
def _forward(P, A, alive, W, D, pi, H, N, pos, cap, slot, cnt, val, mem, prd, pj, pl, pk, icnt, ival, imem, iprd, ia,
             ib, ccnt, cval, cmem, cprd, csrc, cq, cz, order, ord_n, df1, aidx, adm, best, best_t, best_l):
    n = P.shape[0]
    inf = np.inf
    merges = 0
    # _offer's arguments all int64, none a literal: each literal value or integer width compiles its own copy
    zero, one = np.int64(0), np.int64(1)
    for k in range(n):
        best[k] = inf
        best_t[k] = -1
        best_l[k] = -1
    for j in range(n):
        ccnt[0, j] = 0
    for t in range(H + 1):
        for j in range(n + 1):
            cnt[t, j] = 0
            df1[t, j] = inf
        if t > 0:
            # the idle states of j change only where j completed at t - 1: its labels offered to the running
            # bucket (the labels already there dominate none of each other); each names the completion it carries
            for idx in range(ord_n[t - 1]):
                j = order[t - 1, idx]
                for q in range(cnt[t - 1, j]):
                    merges += _offer(ccnt, cval, cmem, cprd, csrc, cq, cz, zero, j, val[t - 1, j, q],
                                     np.int64(mem[t - 1, j, q]), np.int64(prd[t - 1, j, q]), t - 1, np.int64(q),
                                     zero, cap)
        r = slot[t]
        if r >= 0:
            # an arrival time: a task may start here after idle time
            for j in range(n):
                m = ccnt[0, j]
                icnt[r, j] = m
                for q in range(m):
                    ival[r, j, q] = cval[0, j, q]
                    imem[r, j, q] = cmem[0, j, q]
                    iprd[r, j, q] = cprd[0, j, q]
                    ia[r, j, q] = csrc[0, j, q]
                    ib[r, j, q] = cq[0, j, q]
        m_t = 0
        for k in range(n):
            if not alive[t, k]:
                continue
            s = t - P[k]
            if s < A[k]:
                continue
            ck = _tard(W, D, k, t) - pi[k]
            ra = aidx[t, k] if t < aidx.shape[0] else -1   # the pairs the rule admits (pricing.admit_table)
            # sources in order of their cheapest label: once two labels of memory {k} with distinct tasks
            # before them are in, every later candidate is dominated
            for idx in range(ord_n[s]):
                j = order[s, idx]
                fj = df1[s, j]
                if j == k:
                    continue
                if _settled(cnt, val, mem, prd, t, k, fj + ck):
                    break
                if ra >= 0:
                    if (adm[ra, j >> 6] >> (j & 63)) & 1 == 0:
                        continue
                elif interchange_beats(P, A, W, D, j, k, s, t):
                    continue
                for q in range(cnt[s, j]):
                    if prd[s, j, q] == k:
                        continue
                    nb = _extend(N, pos, j, mem[s, j, q], k)
                    if nb >= 0:
                        merges += _offer(cnt, val, mem, prd, pj, pl, pk, t, k, val[s, j, q] + ck, nb, j, j,
                                         np.int64(q), zero, cap)
            if s == A[k]:
                # a semi-active schedule idles only until an arrival: from idle or the empty machine
                merges += _offer(cnt, val, mem, prd, pj, pl, pk, t, k, ck, one, n, n, zero, zero, cap)
                r = slot[s]
                for j in range(n):
                    if j == k:
                        continue
                    for q in range(icnt[r, j]):
                        if iprd[r, j, q] == k:
                            continue
                        nb = _extend(N, pos, j, imem[r, j, q], k)
                        if nb >= 0:
                            merges += _offer(cnt, val, mem, prd, pj, pl, pk, t, k, ival[r, j, q] + ck, nb, j, j,
                                             np.int64(q), one, cap)
            if cnt[t, k] == 0:
                continue
            for q in range(cnt[t, k]):
                v = val[t, k, q]
                if v < df1[t, k]:
                    df1[t, k] = v
                if v < best[k]:
                    best[k] = v
                    best_t[k] = t
                    best_l[k] = q
            _insert_in_order(order, t, m_t, k, df1, df1[t, k])  # in order of their cheapest label
            m_t += 1
        ord_n[t] = m_t
    return merges


@numba.njit(cache=True, inline="always")
def _settled(cnt, val, mem, prd, t, k, v):
    """Whether bucket ``(t, k)`` holds two labels of value ``<= v``, memory ``{k}`` and distinct tasks before
    them (no label of value ``>= v`` can enter it then)."""
    first = -2
    for q in range(cnt[t, k]):
        if val[t, k, q] <= v and mem[t, k, q] == 1:
            if first == -2:
                first = prd[t, k, q]
            elif prd[t, k, q] != first:
                return True
    return False


def _pos(N: np.ndarray, n: int) -> np.ndarray:
    pos = np.full((n, n), -1, np.int64)
    for k in range(n):
        for r, x in enumerate(N[k]):
            if x >= 0:
                pos[k, x] = r
    return pos


@known_options
def forward(P, A, alive, W, D, pi, N, work: dict | None = None, cap: int = CAP) -> NgLabels:
    """Labels of the ng pricing network (module docstring); arguments as :func:`bounds.hetero_pricing.forward`,
    ``N`` the neighbourhoods (:func:`neighbourhoods`, local task indices), ``cap`` labels per bucket."""
    H = alive.shape[0] - 1
    n = len(P)
    N = np.ascontiguousarray(N, np.int64)
    A = np.asarray(A, np.int64)
    arrivals = np.unique(A[A <= H])
    keep = work is not None
    work = {} if work is None else work
    if (work.get("ng_rows", -1) < H + 1 or work.get("ng_n") != n or work.get("ng_cap") != cap
            or work.get("ng_slots", -1) < len(arrivals)):
        s2, s3 = (H + 1, n + 1), (H + 1, n + 1, cap)
        i2, i3, c3 = (max(1, len(arrivals)), n), (max(1, len(arrivals)), n, cap), (1, n, cap)
        work.update(ng_rows=H + 1, ng_n=n, ng_cap=cap, ng_slots=len(arrivals),
                    ng_order=(np.empty((H + 1, n), np.int64), np.empty(H + 1, np.int64)), ng_arrays=(
                        np.empty(s2, np.int32), np.empty(s3), np.empty(s3, np.int32), np.empty(s3, np.int32),
                        np.empty(s3, np.int32), np.empty(s3, np.int8), np.empty(s3, np.int8),
                        np.empty(i2, np.int32), np.empty(i3), np.empty(i3, np.int32), np.empty(i3, np.int32),
                        np.empty(i3, np.int32), np.empty(i3, np.int8), np.empty(s2)),
                    ng_running=(np.empty((1, n), np.int32), np.empty(c3), np.empty(c3, np.int32),
                                np.empty(c3, np.int32), np.empty(c3, np.int32), np.empty(c3, np.int8),
                                np.empty(c3, np.int8)))
    arrays = tuple(x[:H + 1] for x in work["ng_arrays"][:7]) + work["ng_arrays"][7:13] + (
        work["ng_arrays"][13][:H + 1],)
    slot = np.full(H + 1, -1, np.int64)
    slot[arrivals] = np.arange(len(arrivals))
    best, best_t, best_l = np.empty(n), np.empty(n, np.int64), np.empty(n, np.int64)
    order, ord_n = work["ng_order"]
    data = (np.asarray(P, np.int64), A, np.asarray(W, np.float64), np.asarray(D, np.int64))
    merges = _forward(*data[:2], alive, *data[2:], np.asarray(pi, np.float64), int(H), N, _pos(N, n), int(cap), slot,
                      *arrays[:-1], *work["ng_running"], order[:H + 1], ord_n[:H + 1], arrays[-1],
                      *admit_table(work if keep else None, data, alive), best, best_t, best_l)
    return NgLabels(arrays[-1], best, best_t, best_l, arrays + (slot,), int(merges))


@numba.njit(cache=True)
def _trace(P, pj, pl, pk, slot, ia, ib, k, t, q, out):
    n = pj.shape[1] - 1
    m = 0
    while k != n:
        out[m, 0] = k
        out[m, 1] = t
        m += 1
        j = pj[t, k, q]
        r = pl[t, k, q]
        idle = pk[t, k, q] == 1
        t -= P[k]
        k = j
        q = r
        if idle and k != n:
            # the idle label names the completion label it carries
            r = slot[t]
            t, q = ia[r, k, q], ib[r, k, q]
    return m


@known_options
def columns(lab: NgLabels, P, W, D, pi, limit: int, tol: float = 1e-9) -> list[tuple[float, list, float]]:
    """Up to ``limit`` pseudo-schedules of negative value, the cheapest ending with each task, best first
    (as :func:`bounds.hetero_pricing.columns`)."""
    order = np.argsort(lab.best, kind="stable")[:limit]
    picks = order[lab.best[order] < -tol]
    (_, _, _, _, pj, pl, pk, _, _, _, _, ia, ib, _, slot) = lab.arrays
    P = np.asarray(P, np.int64)
    pi = np.asarray(pi, float)
    out = []
    buf = np.empty((lab.df1.shape[0] + 1, 2), np.int64)
    for k in picks:
        m = _trace(P, pj, pl, pk, slot, ia, ib, int(k), int(lab.best_t[k]), int(lab.best_l[k]), buf)
        seq = buf[:m][::-1]
        cost = float(sum(W[a] * max(0, b - D[a]) for a, b in seq))
        out.append((cost - float(pi[seq[:, 0]].sum()), list(zip(seq[:, 0].tolist(), seq[:, 1].tolist())), cost))
    return out
