"""Pricing of the heterogeneous-GPU column generation: cheapest pseudo-schedule of one GPU class.

The pricing problem of :mod:`bounds.hetero_colgen` (Pessoa, Uchoa, Poggi de
Aragão and Rodrigues, "Exact algorithm over an arc-time-indexed formulation
for parallel machine scheduling problems", 2010, Sec. 3): on the integer
time grid ``0..H`` of one GPU class, find the cheapest pseudo-schedule, where
completing task ``k`` at ``t`` costs ``W_k max(0, t - D_k) - pi_k`` (its
tardiness less its dual price). A *pseudo-schedule* is a sequence of tasks on
one GPU, each started at ``max(A_k, completion of the previous one)`` (a
semi-active schedule: some optimal schedule is one, eqs. 4-6) and completed at
an allowed time (``alive``); a task may occur several times, but it keeps
three rules that some optimal schedule satisfies on every GPU:

* no task twice in a row and no 2-cycle ``i, j, i`` (with or without idle
  time between; a real schedule repeats nothing);
* adjacent-pair dominance: ``j`` directly before ``k`` (no idle time between)
  is left out when the interchange ``k, j`` (``k`` starting where ``j``
  started, which its arrival must allow) is strictly cheaper, or equally
  cheap and ``j > k``. Each interchange followed by the left shift to the
  semi-active schedule lowers the cost, or keeps it and lowers the number of
  inversions of the index order, so repeating them ends in an optimal
  schedule without such a pair (Tanaka, Fujikuma and Araki 2009, Sec. 4, for
  one machine without arrivals).

Labels (Abdul-Razaq and Potts' 2-cycle elimination): a completion label of
``(t, j)`` ("``j`` completes at ``t``") keeps its cheapest value with the
task before ``j`` and the cheapest one with another task before ``j``; an
idle label "``j`` completed before ``t``, the machine idles since" keeps the
same two. A task ``k`` starting at ``s`` follows a completion label of ``s``,
or, only if ``s`` is its arrival, an idle label of ``s`` or the empty machine.
The finite completion labels of each time are kept in order of value (the
completions allowed at a time are few: an insertion sort as they are made),
and the scan of ``s``'s stops at the first that cannot improve the two kept.
Most sources the scan meets are often refused by the interchange rule,
which depends on the data alone: the second call on a network with the
same ``work`` dict builds the admitted sources of each allowed completion
as a bit row (:func:`admissible`), so a refused source costs the scan one
bit test.
The idle labels of ``j`` change only where ``j`` completes, so they are
carried in one running pair per task, updated from each time's finite
completions, and stored only at the arrival times (the only starts after
idle time); each stored idle label names the completion label it carries.
Compiled with numba (:func:`forward`); :func:`columns` reads the cheapest
pseudo-schedule ending with each task off the labels; :func:`backward`
bounds the rest of a pseudo-schedule for reduced-cost fixing.

Examples
--------
>>> import numpy as np
>>> P, A = np.array([2, 3]), np.array([0, 1])
>>> W, D, alive = np.array([1.0, 2.0]), np.array([2, 3]), np.ones((9, 2), bool)
>>> lab = forward(P, A, alive, W, D, np.array([5.0, 5.0]))
>>> [(v, seq, cost) for v, seq, cost in columns(lab, P, W, D, np.array([5.0, 5.0]), 2)]
[(-6.0, [(0, 2), (1, 5)], 4.0), (-5.0, [(0, 2)], 0.0)]
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numba
import numpy as np

from instances.options import known_options

__all__ = ["Labels", "admissible", "forward", "backward", "columns", "column_arrays", "path_cost", "trace"]


#: the most 64-bit words :func:`admissible` keeps for one network (16 MiB)
MAX_ADMIT_WORDS = 2 ** 21


@dataclass
class Labels:
    """Labels of one pricing pass (``d*`` indexed ``[t, j]``, ``j = n`` the empty machine).

    ``d*``: task ``j`` completes at ``t`` (value ``df1`` with the task
    ``dp1`` before it, ``df2`` with another one ``dp2``; ``ds1``/``ds2``:
    that task's label was a completion label, 0, or an idle one, 1). ``i*``,
    indexed ``[slot[t], j]`` at the arrival times ``t`` (``slot`` is -1
    elsewhere): ``j`` completed before ``t`` and the machine idles since
    (``is1``/``is2``: the completion label carried, ``2 t' + 1`` for label 1
    of ``(t', j)`` and ``2 t' + 2`` for label 2). ``best``/``best_t``: the
    cheapest completion label of each task and its time.
    """

    df1: np.ndarray
    dp1: np.ndarray
    ds1: np.ndarray
    df2: np.ndarray
    dp2: np.ndarray
    ds2: np.ndarray
    slot: np.ndarray
    if1: np.ndarray
    ip1: np.ndarray
    is1: np.ndarray
    if2: np.ndarray
    ip2: np.ndarray
    is2: np.ndarray
    best: np.ndarray
    best_t: np.ndarray

    @property
    def value(self) -> float:
        """The cheapest pseudo-schedule's value (the empty one, 0, included)."""
        return float(min(0.0, self.best.min()))


@numba.njit(cache=True, inline="always")
def _tard(W, D, k, t):
    late = t - D[k]
    return W[k] * late if late > 0 else 0.0


@numba.njit(cache=True, inline="always")
def _insert_in_order(order, t, m, k, value, v):
    """Put task ``k`` into time ``t``'s first ``m`` completions, kept in order of ``value[t, .]`` (``v`` is
    ``k``'s; ties in the order they come): an insertion sort as they are made, as a time has a few."""
    r = m
    while r > 0 and value[t, order[t, r - 1]] > v:
        order[t, r] = order[t, r - 1]
        r -= 1
    order[t, r] = k


@numba.njit(cache=True, inline="always")
def interchange_beats(P, A, W, D, j, k, s, t):
    """Whether ``j`` then ``k`` back to back (``j`` ending at ``s``, ``k`` at ``t``) is left out by
    adjacent-pair dominance: ``k, j`` from ``j``'s start is strictly cheaper, or as cheap and ``j > k``."""
    sk = s - P[j]
    if sk < A[k]:
        return False
    lhs = _tard(W, D, j, s) + _tard(W, D, k, t)
    rhs = _tard(W, D, k, sk + P[k]) + _tard(W, D, j, t)
    return lhs > rhs or (lhs == rhs and j > k)


@numba.njit(cache=True, inline="always")
def _merge(a1, q1, c1, a2, q2, c2, b1, r1, e1, b2, r2, e2):
    """Best two labels of distinct predecessors out of two such pairs (each pair distinct already)."""
    if a1 <= b1:
        if r1 != q1:
            if b1 < a2:
                return a1, q1, c1, b1, r1, e1
            return a1, q1, c1, a2, q2, c2
        if b2 < a2:
            return a1, q1, c1, b2, r2, e2
        return a1, q1, c1, a2, q2, c2
    if q1 != r1:
        if a1 < b2:
            return b1, r1, e1, a1, q1, c1
        return b1, r1, e1, b2, r2, e2
    if a2 < b2:
        return b1, r1, e1, a2, q2, c2
    return b1, r1, e1, b2, r2, e2


@numba.njit(cache=True, inline="always")
def _insert(b1, j1, e1, b2, j2, e2, v, j, e):
    """Offer ``(v, j, e)`` to the best two labels ``(b1, j1)``, ``(b2, j2)`` of distinct predecessors."""
    if j == j1:
        if v < b1:
            return v, j1, e, b2, j2, e2
        return b1, j1, e1, b2, j2, e2
    if v < b1:
        return v, j, e, b1, j1, e1
    if j == j2:
        if v < b2:
            return b1, j1, e1, v, j2, e
        return b1, j1, e1, b2, j2, e2
    if v < b2:
        return b1, j1, e1, v, j, e
    return b1, j1, e1, b2, j2, e2


@numba.njit(cache=True)
def _forward(P, A, alive, W, D, pi, H, df1, dp1, ds1, df2, dp2, ds2, slot, if1, ip1, is1, if2, ip2, is2, order, oval,
             cnt, cur_v, cur_p, cur_s, aidx, adm, best, best_t):
    n = P.shape[0]
    inf = np.inf
    for k in range(n):
        best[k] = inf
        best_t[k] = -1
    for j in range(n):
        cur_v[0, j] = inf
        cur_v[1, j] = inf
        cur_p[0, j] = -1
        cur_p[1, j] = -1
        cur_s[0, j] = 0
        cur_s[1, j] = 0
    for t in range(H + 1):
        # only the values need a start: a label's other fields are read only once it is finite
        for j in range(n + 1):
            df1[t, j] = inf
            df2[t, j] = inf
        if t > 0:
            # the idle labels of j change only where j completed at t - 1
            for idx in range(cnt[t - 1]):
                j = order[t - 1, idx]
                v1, q1, c1, v2, q2, c2 = _merge(df1[t - 1, j], dp1[t - 1, j], 2 * t - 1, df2[t - 1, j],
                                                dp2[t - 1, j], 2 * t, cur_v[0, j], cur_p[0, j], cur_s[0, j],
                                                cur_v[1, j], cur_p[1, j], cur_s[1, j])
                cur_v[0, j] = v1
                cur_p[0, j] = q1
                cur_s[0, j] = c1
                cur_v[1, j] = v2
                cur_p[1, j] = q2
                cur_s[1, j] = c2
        r = slot[t]
        if r >= 0:
            for j in range(n):
                if1[r, j] = cur_v[0, j]
                ip1[r, j] = cur_p[0, j]
                is1[r, j] = cur_s[0, j]
                if2[r, j] = cur_v[1, j]
                ip2[r, j] = cur_p[1, j]
                is2[r, j] = cur_s[1, j]
        m = 0
        for k in range(n):
            if not alive[t, k]:
                continue
            s = t - P[k]
            if s < A[k]:
                continue
            b1 = inf
            j1 = -1
            e1 = 0
            b2 = inf
            j2 = -1
            e2 = 0
            # right after a task that completes at s (no idle): the two cheapest distinct sources j != k,
            # no 2-cycle k, j, k, no adjacent pair j, k that the interchange k, j beats
            # (the sources the rule refuses are often most of the cheap ones: with a row of admitted sources,
            # from :func:`admissible`, each costs a bit test instead of the interchange's arithmetic)
            r = aidx[t, k] if t < aidx.shape[0] else -1
            for idx in range(cnt[s]):
                fj = oval[s, idx]
                if fj >= b2:
                    break
                j = order[s, idx]
                if r >= 0:
                    if (adm[r, j >> 6] >> (j & 63)) & 1 == 0:
                        continue
                elif j == k or interchange_beats(P, A, W, D, j, k, s, t):
                    continue
                v = fj if dp1[s, j] != k else df2[s, j]
                b1, j1, e1, b2, j2, e2 = _insert(b1, j1, e1, b2, j2, e2, v, j, 0)
            if s == A[k]:
                # a semi-active schedule idles only until an arrival: from idle (or an empty machine)
                # a task starts at its own arrival
                q = slot[s]
                for j in range(n + 1):
                    if j == k:
                        continue
                    if j == n:
                        v = 0.0
                    else:
                        v = if1[q, j] if ip1[q, j] != k else if2[q, j]
                    b1, j1, e1, b2, j2, e2 = _insert(b1, j1, e1, b2, j2, e2, v, j, 1)
            if j1 < 0:
                continue
            c = _tard(W, D, k, t) - pi[k]
            v1 = b1 + c
            df1[t, k] = v1
            dp1[t, k] = j1
            ds1[t, k] = e1
            df2[t, k] = b2 + c
            dp2[t, k] = j2
            ds2[t, k] = e2
            if v1 < best[k]:
                best[k] = v1
                best_t[k] = t
            # t's finite completions in order of value, the values beside them (the scans read them in order)
            q = m
            while q > 0 and oval[t, q - 1] > v1:
                order[t, q] = order[t, q - 1]
                oval[t, q] = oval[t, q - 1]
                q -= 1
            order[t, q] = k
            oval[t, q] = v1
            m += 1
        cnt[t] = m


@numba.njit(cache=True)
def _admissible(P, A, W, D, alive, aidx, adm):
    """Fill ``aidx``/``adm`` (see :func:`admissible`); how many rows."""
    n = P.shape[0]
    ok = np.empty(adm.shape[1] * 64, np.int64)
    ok[:] = 0
    r = 0
    for t in range(alive.shape[0]):
        for k in range(n):
            aidx[t, k] = -1
            if not alive[t, k]:
                continue
            s = t - P[k]
            if s < A[k]:
                continue
            # interchange_beats for every j at once, branch-free (the same sums in the same order)
            wk, ak, pk, dk = W[k], A[k], P[k], D[k]
            tk = wk * max(t - dk, 0)
            for j in range(n):
                sk = s - P[j]
                lhs = W[j] * max(s - D[j], 0) + tk
                rhs = wk * max(sk + pk - dk, 0) + W[j] * max(t - D[j], 0)
                beaten = (sk >= ak) & ((lhs > rhs) | ((lhs == rhs) & (j > k)))
                ok[j] = (j != k) & ~beaten
            for w in range(adm.shape[1]):
                word = np.int64(0)
                for b in range(64):
                    word |= ok[64 * w + b] << b
                adm[r, w] = word
            aidx[t, k] = r
            r += 1
    return r


@known_options
def admissible(P, A, alive, W, D, max_words: int = MAX_ADMIT_WORDS):
    """The sources each completion admits right before it: ``(aidx, adm)``.

    Bit ``j`` of row ``adm[aidx[t, k]]`` (words of 64 bits) is set when
    ``j`` may complete at ``t - P_k`` right before ``k`` completes at ``t``:
    ``j != k`` and adjacent-pair dominance keeps the pair (module docstring).
    It depends on the data alone, not on the prices, so it is built once per
    network for its allowed completions (``aidx[t, k] = -1`` elsewhere; the
    pricing tests the pair itself there). ``None`` when the rows would take
    more than ``max_words`` words.
    """
    n = len(P)
    words = (n + 63) // 64
    rows = int(np.count_nonzero(alive))
    if rows * words > max_words:
        return None
    aidx = np.empty(alive.shape, np.int32)
    adm = np.empty((max(1, rows), words), np.int64)
    _admissible(np.asarray(P, np.int64), np.asarray(A, np.int64), np.asarray(W, np.float64), np.asarray(D, np.int64),
                alive, aidx, adm)
    return aidx, adm


def admit_table(work: dict | None, data, alive) -> tuple[np.ndarray, np.ndarray]:
    """:func:`admissible` of the network ``data = (P, A, W, D)``, kept in ``work`` (the pricing's and the ng
    pricing's of one class share it) and built at its second call there or the first after it that
    ``work["admit_build"]`` (default true) allows, its time in ``work["admit_seconds"]``; until then,
    without ``work``, or where too large, a table that names no row (the kernels test each pair themselves)."""
    if work is not None:
        if "admit_data" not in work or not all(np.array_equal(x, y) for x, y in zip(data, work["admit_data"])):
            work.update(admit=None, admit_data=tuple(x.copy() for x in data), admit_calls=0, admit_done=False)
        work["admit_calls"] += 1
        # not at the first call: a row of n tests per completion costs a few of its scans, and the first
        # fixing often removes much of the first network; later calls only remove completions, or restore
        # the first network (whose rows not built are tested pair by pair)
        if not work["admit_done"] and work["admit_calls"] >= 2 and work.get("admit_build", True):
            t = time.perf_counter()
            P, A, W, D = data
            work["admit"] = admissible(P, A, alive, W, D)
            work["admit_done"] = True       # built, or too large: not again
            work["admit_seconds"] = time.perf_counter() - t
    table = None if work is None else work["admit"]
    return table or (np.full((1, len(data[0])), -1, np.int32), np.zeros((1, 1), np.int64))


@known_options
def forward(P, A, alive, W, D, pi, work: dict | None = None) -> Labels:
    """Labels of the pricing network (see the module docstring).

    Parameters
    ----------
    P, A
        Integer run times (``>= 1``) and arrivals of the class's tasks.
    alive
        ``(H + 1, n)`` booleans: task ``k`` may complete at ``t`` (the
        incumbent's cap and reduced-cost fixing remove the others).
    W, D
        Weights and due dates on the grid (tardiness ``W_k max(0, t - D_k)``).
    pi
        Dual prices of the tasks.
    work
        A dict kept between calls on the same class: the label arrays are
        allocated once in it (at the largest horizon seen) and reused, so the
        labels of a call are valid until the next call with the same ``work``;
        it also keeps the network's :func:`admissible` table.
    """
    H = alive.shape[0] - 1
    n = len(P)
    A = np.asarray(A, np.int64)
    arrivals = np.unique(A[A <= H])
    keep = work is not None
    work = {} if work is None else work
    if work.get("rows", -1) < H + 1 or work.get("n") != n or work.get("slots", -1) < len(arrivals):
        shape, idle = (H + 1, n + 1), (max(1, len(arrivals)), n)
        work.update(rows=H + 1, n=n, slots=len(arrivals), order=np.empty((H + 1, n), np.int32),
                    oval=np.empty((H + 1, n)), cnt=np.empty(H + 1, np.int32),
                    arrays=[np.empty(shape, dtype) for _ in range(2) for dtype in (np.float64, np.int32, np.int8)],
                    idle=[np.empty(idle, dtype) for _ in range(2) for dtype in (np.float64, np.int32, np.int64)],
                    cur=(np.empty((2, n)), np.empty((2, n), np.int32), np.empty((2, n), np.int64)))
    arrays = [x[:H + 1] for x in work["arrays"]]
    slot = np.full(H + 1, -1, np.int32)
    slot[arrivals] = np.arange(len(arrivals), dtype=np.int32)
    data = (np.asarray(P, np.int64), A, np.asarray(W, np.float64), np.asarray(D, np.int64))
    best, best_t = np.empty(n), np.empty(n, np.int64)
    _forward(*data[:2], alive, *data[2:], np.asarray(pi, np.float64), int(H), *arrays, slot, *work["idle"],
             work["order"][:H + 1], work["oval"][:H + 1], work["cnt"][:H + 1], *work["cur"],
             *admit_table(work if keep else None, data, alive), best, best_t)
    return Labels(*arrays, slot, *work["idle"], best, best_t)


@numba.njit(cache=True)
def _backward(P, A, alive, W, D, pi, b):
    H = alive.shape[0] - 1
    n = P.shape[0]
    for t in range(H, -1, -1):
        b1 = 0.0        # stopping here: the empty rest, "task -1"
        l1 = -1
        b2 = 0.0
        l2 = -1
        for l in range(n):
            s = t if t >= A[l] else A[l]
            e = s + P[l]
            if e > H or not alive[e, l]:
                continue
            v = _tard(W, D, l, e) - pi[l] + b[e, l]
            if v < b1:
                b2 = b1
                l2 = l1
                b1 = v
                l1 = l
            elif v < b2:
                b2 = v
                l2 = l
        for k in range(n):
            b[t, k] = b1 if l1 != k else b2


@known_options
def backward(P, A, alive, W, D, pi) -> np.ndarray:
    """``b[t, k]``: a lower bound on the cheapest rest of a pseudo-schedule after ``k`` completes at ``t``.

    The rest starts its next task at ``max(t, arrival)`` (semi-active) and
    never right after itself; the 2-cycle and adjacency rules are dropped,
    which only lowers it. ``forward(...).df1[t, k] + b[t, k]`` bounds every
    pseudo-schedule through ``(t, k)`` from below (reduced-cost fixing).
    """
    H = alive.shape[0] - 1
    b = np.empty((H + 1, len(P)))
    _backward(np.asarray(P, np.int64), np.asarray(A, np.int64), alive, np.asarray(W, np.float64),
              np.asarray(D, np.int64), np.asarray(pi, np.float64), b)
    return b


@numba.njit(cache=True)
def _fix_completions(alive, df1, b, offset, theta, last):
    """Reduced-cost fixing of one class (:mod:`bounds.hetero_colgen`): clear ``alive[t, k]`` where the cheapest
    pseudo-schedule through it, ``offset + df1[t, k] + b[t, k]``, exceeds ``theta`` or ``t`` is past ``last[k]``;
    how many were cleared, and the last time with a completion left (-1: none)."""
    removed = 0
    top = -1
    for t in range(alive.shape[0]):
        for k in range(alive.shape[1]):
            if alive[t, k]:
                if offset + (df1[t, k] + b[t, k]) > theta or t > last[k]:
                    alive[t, k] = False
                    removed += 1
                else:
                    top = t
    return removed, top


@numba.njit(cache=True)
def _trace(P, dp1, ds1, dp2, ds2, slot, ip1, is1, is2, k, t, out):
    n = dp1.shape[1] - 1
    m = 0
    which = 1
    while k != n:
        out[m, 0] = k
        out[m, 1] = t
        m += 1
        pred = dp1[t, k] if which == 1 else dp2[t, k]
        idle = (ds1[t, k] if which == 1 else ds2[t, k]) == 1
        s = t - P[k]
        if pred != n and idle:
            # the idle label names the completion label it carries
            r = slot[s]
            code = is1[r, pred] if ip1[r, pred] != k else is2[r, pred]
            t = (code - 1) // 2
            which = 1 if code % 2 == 1 else 2
        else:
            if pred != n:
                which = 1 if dp1[s, pred] != k else 2
            t = s
        k = pred
    return m


@known_options
def trace(lab: Labels, P, j: int) -> list[tuple[int, int]]:
    """The cheapest pseudo-schedule ending with task ``j``: ``(task, completion)`` in time order."""
    out = np.empty((lab.df1.shape[0] + 1, 2), np.int64)
    m = _trace(np.asarray(P, np.int64), lab.dp1, lab.ds1, lab.dp2, lab.ds2, lab.slot, lab.ip1, lab.is1, lab.is2,
               int(j), int(lab.best_t[j]), out)
    return [(int(k), int(t)) for k, t in out[:m][::-1]]


@known_options
def path_cost(seq, W, D) -> float:
    """Tardiness of a pseudo-schedule ``[(task, completion), ...]`` on the grid."""
    return float(sum(W[k] * max(0, t - D[k]) for k, t in seq))


@numba.njit(cache=True)
def _columns(P, W, D, dp1, ds1, dp2, ds2, slot, ip1, is1, is2, best_t, picks, buf, ks, ts, lens, costs):
    """The pseudo-schedules ending with ``picks`` traced one after another into ``ks``/``ts`` (time order),
    their lengths and costs; how many completions in all."""
    at = 0
    for q in range(len(picks)):
        j = picks[q]
        m = _trace(P, dp1, ds1, dp2, ds2, slot, ip1, is1, is2, j, best_t[j], buf)
        lens[q] = m
        c = 0.0
        for r in range(m):
            k = buf[m - 1 - r, 0]
            t = buf[m - 1 - r, 1]
            ks[at + r] = k
            ts[at + r] = t
            c += _tard(W, D, k, t)
        costs[q] = c
        at += m
    return at


@known_options
def column_arrays(lab: Labels, P, W, D, limit: int, tol: float = 1e-9):
    """:func:`columns` as arrays: ``(ks, ts, lens, costs)``, the tasks and completions of up to ``limit``
    pseudo-schedules of negative value one after another (each in time order, the cheapest first), their
    lengths and costs (no Python objects per column: the column generation takes a dozen a class and pass)."""
    order = np.argsort(lab.best, kind="stable")[:limit]
    picks = order[lab.best[order] < -tol].astype(np.int64)
    rows = lab.df1.shape[0] + 1
    buf = np.empty((rows, 2), np.int64)
    ks, ts = np.empty(len(picks) * rows, np.int64), np.empty(len(picks) * rows, np.int64)
    lens, costs = np.empty(len(picks), np.int64), np.empty(len(picks))
    if len(picks):
        m = _columns(np.asarray(P, np.int64), np.asarray(W, np.float64), np.asarray(D, np.int64), lab.dp1, lab.ds1,
                     lab.dp2, lab.ds2, lab.slot, lab.ip1, lab.is1, lab.is2, lab.best_t, picks, buf, ks, ts, lens,
                     costs)
        ks, ts = ks[:m], ts[:m]
    return ks, ts, lens, costs


@known_options
def columns(lab: Labels, P, W, D, pi, limit: int, tol: float = 1e-9) -> list[tuple[float, list, float]]:
    """Up to ``limit`` pseudo-schedules of negative value: the cheapest ending with each task, best first.

    Returns ``(value, [(task, completion), ...], cost)`` with ``value = cost - sum of pi`` over its tasks.
    """
    ks, ts, lens, costs = column_arrays(lab, P, W, D, limit, tol)
    pi = np.asarray(pi)
    out, at = [], 0
    for m, cost in zip(lens.tolist(), costs.tolist()):
        k = ks[at:at + m]
        out.append((float(cost - pi[k].sum()), list(zip(k.tolist(), ts[at:at + m].tolist())), float(cost)))
        at += m
    return out
