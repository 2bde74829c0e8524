"""Wide label sets for the modifier passes: ``K`` machine words per set of modifier jobs.

The passes of :mod:`milp.hetero_modifiers` keep, per label, the set of
modifier jobs done (Tanaka, Fujikuma & Araki, "An exact algorithm for
single-machine scheduling without machine idle time", J. Scheduling 2009,
Sec. 5). One ``int64`` holds 62 of them, which is the fast common case;
beyond that the passes here store a set as a row of ``K`` words
(``S[label, 0:K]``, modifier ``b`` at bit ``b % 62`` of word ``b // 62``), so
that a narrow set is the first word of a wide one with the others zero.
Rows are compared lexicographically (word 0 first), so a narrow, sorted
label array padded with zero words is a sorted wide one and the other
direction's labels of a narrow pass still prune a wide one.

The kernels mirror the narrow ones of :mod:`milp.hetero_modifiers` (same
arguments and return values) except that ``S``, the per-state table's sets
and the other direction's sets are 2-D, a job's modifier bit is a word
(``bw``) and a mask (``bb``), ``req``/``forb`` are ``(n, K)`` and the mask of
the other direction's modifiers is a ``K``-vector. Used only by
:mod:`milp.hetero_modifiers`.

Examples
--------
>>> S = np.array([[1, 0], [1, 2], [3, 0]], dtype=np.int64)
>>> int(_find_row(S, 0, 3, np.array([1, 2], dtype=np.int64))), int(_find_row(S, 0, 3, np.array([2, 0])))
(1, -1)
"""

from __future__ import annotations

import numpy as np

from bounds.hetero_dp import lowest_bit, njit
from instances.options import known_options

__all__ = ["WORD_BITS", "words_for", "widen"]

#: Modifier jobs per word (an int64 that stays non-negative, so rows sort as signed words).
WORD_BITS = 62
_GOLD = np.uint64(11400714819323198485)


@known_options
def words_for(m: int, word_bits: int = WORD_BITS) -> int:
    """Words of a set of ``m`` modifier jobs (at least one).

    >>> words_for(62), words_for(63), words_for(0)
    (1, 2, 1)
    """
    return max(1, (int(m) + word_bits - 1) // word_bits)


@known_options
def widen(S: np.ndarray, K: int) -> np.ndarray:
    """Sets ``S`` (1-D narrow or 2-D) as ``K``-word rows, the added words zero (order kept)."""
    S2 = S.reshape(len(S), -1)
    if S2.shape[1] == K:
        return S2
    out = np.zeros((len(S), K), dtype=np.int64)
    out[:, :S2.shape[1]] = S2
    return out


@njit(cache=True, inline="always")
def _less_rows(A, a, B, b):
    """Whether row ``a`` of ``A`` comes before row ``b`` of ``B``."""
    for k in range(A.shape[1]):
        if A[a, k] != B[b, k]:
            return A[a, k] < B[b, k]
    return False


@njit(cache=True)
def _find_row(S, lo, hi, key):
    """Position of the row ``key`` in the sorted rows ``S[lo:hi]``, or -1."""
    K = S.shape[1]
    a, b = lo, hi
    while a < b:
        m = (a + b) >> 1
        less = False
        for k in range(K):
            if S[m, k] != key[k]:
                less = S[m, k] < key[k]
                break
        if less:
            a = m + 1
        else:
            b = m
    if a < hi:
        for k in range(K):
            if S[a, k] != key[k]:
                return -1
        return a
    return -1


@njit(cache=True)
def _slot(key, stamp, tstamp, tslot, tS, bits):
    """Slot of the row ``key`` in the open-addressing table (``-1 - position`` if new)."""
    K = key.shape[0]
    size = tstamp.shape[0]
    h = np.uint64(0)
    for k in range(K):
        h = (h ^ np.uint64(key[k])) * _GOLD
    h = np.int64(h >> np.uint64(64 - bits))
    while tstamp[h] == stamp:
        s = tslot[h]
        same = True
        for k in range(K):
            if tS[s, k] != key[k]:
                same = False
                break
        if same:
            return s
        h = (h + 1) & (size - 1)
    return -1 - h


@njit(cache=True)
def _insert(key, val, nb, lab, stamp, tstamp, tslot, tS, tv1, tj1, tp1, tv2, tp2, bits, ns):
    """Offer a candidate to the state's table; returns the new slot count (-1: table full)."""
    h = _slot(key, stamp, tstamp, tslot, tS, bits)
    if h < 0:
        if ns >= tS.shape[0]:
            return -1
        pos = -1 - h
        tstamp[pos] = stamp
        tslot[pos] = ns
        for k in range(key.shape[0]):
            tS[ns, k] = key[k]
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
def _sorted(tS, ns):
    """Indices of the rows ``tS[:ns]`` in lexicographic order (bottom-up merge sort)."""
    a = np.arange(ns)
    b = np.empty(ns, dtype=np.int64)
    width = 1
    while width < ns:
        for lo in range(0, ns, 2 * width):
            mid = min(lo + width, ns)
            hi = min(lo + 2 * width, ns)
            i, j, o = lo, mid, lo
            while i < mid and j < hi:
                if _less_rows(tS, a[j], tS, a[i]):
                    b[o] = a[j]
                    j += 1
                else:
                    b[o] = a[i]
                    i += 1
                o += 1
            while i < mid:
                b[o] = a[i]
                i += 1
                o += 1
            while j < hi:
                b[o] = a[j]
                j += 1
                o += 1
        a, b = b, a
        width *= 2
    return a


@njit(cache=True)
def _emit(t, j, n, ns, tS, tv1, tj1, tp1, tv2, tp2, lo, hi, S, v1, j1, v2, ptr1, ptr2, node, size):
    """Append the ``ns`` slots of state ``(t, j)`` sorted by set; returns the new size."""
    order = _sorted(tS, ns)
    K = S.shape[1]
    lo[t, j] = size
    for q in range(ns):
        k = order[q]
        for x in range(K):
            S[size, x] = tS[k, x]
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
def _admit(S, lab, wj, bj, rj, fj, key):
    """``key`` = the set of label ``lab`` plus job bit ``bj`` of word ``wj``; False when the
    bit is there already, or the new set misses a job of ``rj`` or holds one of ``fj``."""
    if S[lab, wj] & bj:
        return False
    for k in range(S.shape[1]):
        x = S[lab, k]
        if k == wj:
            x |= bj
        if (x & rj[k]) != rj[k] or (x & fj[k]) != 0:
            return False
        key[k] = x
    return True


@njit(cache=True)
def forward_steps(t0, t1, p, cost, mu, alive, mask, bw, bb, req, forb, limit, mode, qb1, qs1, qb2,
                  olo, ohi, oS, ov1, oj1, ov2, omask,
                  lo, hi, S, v1, j1, v2, ptr1, ptr2, node, size, used,
                  tstamp, tslot, tS, tv1, tj1, tp1, tv2, tp2, bits, stamp):
    """Forward labels of the time steps ``t0 .. t1 - 1`` with ``K``-word sets
    (the narrow kernel's contract: ``(status, t, size, stamp)``)."""
    T1, n = cost.shape
    W = mask.shape[2]
    K = S.shape[1]
    cap = S.shape[0]
    key = np.zeros(K, dtype=np.int64)
    comp = np.zeros(K, dtype=np.int64)
    for t in range(t0, t1):
        start = size
        for j in range(n):
            lo[t, j] = size
            hi[t, j] = size
            if not alive[t, j]:
                continue
            s = t - p[j]
            cj = cost[t, j] - mu[j]
            wj = bw[j]
            bj = bb[j]
            rj = req[j]
            fj = forb[j]
            stamp += 1
            ns = np.int64(0)   # typed: a literal 0 compiles a second copy of _insert and _emit
            if s == 0:
                ok = True
                for k in range(K):
                    key[k] = bj if k == wj else 0
                    if rj[k] != 0:
                        ok = False
                if not ok:
                    continue
                if mode == 0:
                    rest = qb1[t, j]
                else:
                    for k in range(K):
                        comp[k] = ~key[k] & omask[k]
                    r = _find_row(oS, olo[t, j], ohi[t, j], comp)
                    rest = np.inf if r < 0 else ov1[r]
                if cj + rest <= limit:
                    ns = _insert(key, cj, np.int64(-1), np.int64(-1), stamp, tstamp, tslot, tS, tv1, tj1, tp1,
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
                            if not _admit(S, lab, wj, bj, rj, fj, key):
                                continue
                            val = (v2[lab] if j1[lab] == j else v1[lab]) + cj
                            if mode == 0:
                                rest = rest_i
                            else:
                                for k in range(K):
                                    comp[k] = ~key[k] & omask[k]
                                r = _find_row(oS, olo[t, j], ohi[t, j], comp)
                                if r < 0:
                                    continue
                                rest = ov2[r] if oj1[r] == i else ov1[r]
                            if val + rest > limit:
                                continue
                            ns = _insert(key, val, i, lab, stamp, tstamp, tslot, tS, tv1, tj1, tp1, tv2, tp2,
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
def backward_steps(t_hi, t_lo, p, cost, mu, alive, mask, bw, bb, req, forb, limit, mode, qf1, qp1, qf2,
                   olo, ohi, oS, ov1, oj1, ov2, omask,
                   lo, hi, S, v1, j1, v2, ptr1, ptr2, node, size, used,
                   tstamp, tslot, tS, tv1, tj1, tp1, tv2, tp2, bits, stamp):
    """Backward labels of the time steps ``t_hi`` down to ``t_lo + 1`` with ``K``-word
    sets (the sets hold the modifier jobs strictly after the state)."""
    T1, n = cost.shape
    T = T1 - 1
    K = S.shape[1]
    cap = S.shape[0]
    key = np.zeros(K, dtype=np.int64)
    comp = np.zeros(K, dtype=np.int64)
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
                before_k = 0.0
                if mode == 0:
                    before_k = qf2[t, j] if qp1[t, j] == k else qf1[t, j]
                hit = False
                for lab in range(lo[t2, k], hi[t2, k]):
                    # the roles of req and forb swap: the set is what comes after j
                    if not _admit(S, lab, bw[k], bb[k], fj, rj, key):
                        continue
                    val = ck + (v2[lab] if j1[lab] == j else v1[lab])
                    if mode == 0:
                        before = before_k
                    else:
                        for x in range(K):
                            comp[x] = ~key[x] & omask[x]
                        r = _find_row(oS, olo[t, j], ohi[t, j], comp)
                        if r < 0:
                            continue
                        before = ov2[r] if oj1[r] == k else ov1[r]
                    if val + before > limit:
                        continue
                    ns = _insert(key, val, k, lab, stamp, tstamp, tslot, tS, tv1, tj1, tp1, tv2, tp2, bits, ns)
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
