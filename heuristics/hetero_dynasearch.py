"""Iterated dynasearch for one machine (total weighted tardiness, no release dates).

Dynasearch (Congram, Potts & van de Velde, INFORMS J. Computing 2002, Sec. 2;
with the insertion moves of Grosso, Della Croce & Tadei 2004) chooses, in one
step, the best *set* of mutually independent moves by dynamic programming.
A move acts on an interval of positions ``[lo, hi]`` of the sequence:

* swap of the jobs at ``lo`` and ``hi``;
* forward insertion: the job at ``lo`` moves behind the job at ``hi``;
* backward insertion: the job at ``hi`` moves before the job at ``lo``.

Each keeps the total processing time of its interval, so it changes the
completion times inside the interval only; the gains of moves on disjoint
intervals therefore add up exactly, and the best set is found by the
recursion over prefixes ``F(k) = max(F(k-1), max_lo F(lo) + G(lo, k-1))``
with ``G`` the best gain of a move on ``[lo, k-1]``. All ``O(n^2)`` gains are
computed at once with numpy (prefix sums of the cost changes of the jobs
between ``lo`` and ``hi``, one table column per shift value), so a step
costs ``O(n^2)`` array work; the recursion itself runs over the few moves
with a positive gain. After a kick only the moves whose interval meets the
kicked positions can gain (the others see the same jobs from the same start
time as at the local minimum), so only that block is priced.

Iterated dynasearch (Congram et al., Sec. 3): descend with dynasearch steps
to a local minimum, then *kick* it with a few random swaps of jobs at most 20
positions apart and descend again; accept the new local minimum when it is
no worse, and go back to the best one after a run of failures (their
backtracking). Ours adds restarts: after a longer run of kicks without a
new best the walk starts over from a randomised apparent-tardiness-cost
order (the global best is kept), which at n = 100 found the best values
more often in the same time than one long walk, which stays in the first
deep basin it reaches.

Examples
--------
>>> import numpy as np
>>> p, w, d = np.array([3, 2, 4]), np.array([2.0, 1, 3]), np.array([4.0, 3, 5])
>>> seq, cost = iterated_dynasearch(p, w, d, max_iter=10, seed=0)
>>> cost, sorted(seq.tolist())
(12.0, [0, 1, 2])
"""

from __future__ import annotations

import math
import time

import numpy as np

from instances import options as opt
from instances.options import known_options

__all__ = ["sequence_cost", "move_gains", "best_independent_moves", "apply_moves", "dynasearch",
           "iterated_dynasearch"]


def _completion(p: np.ndarray, seq: np.ndarray, start: float = 0.0) -> np.ndarray:
    return start + np.cumsum(p[seq])


@known_options
def sequence_cost(p, w, d, seq, start: float = 0.0) -> float:
    """Total weighted tardiness of ``seq`` started at ``start`` without idle time.

    Examples
    --------
    >>> sequence_cost(np.array([2, 1]), np.array([1.0, 5]), np.array([1.0, 1]), np.array([1, 0]))
    2.0
    """
    seq = np.asarray(seq, dtype=np.int64)
    C = _completion(p, seq, start)
    return float(np.sum(w[seq] * np.maximum(0.0, C - d[seq])))


@known_options
def move_gains(p, w, d, seq, start: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gains (cost decrease) of every swap, forward and backward insertion.

    Returns ``(swap, fwd, bwd)``, each ``(n, n)``, entry ``[lo, hi]`` for
    ``lo < hi`` (the other entries are ``-inf``): ``swap[lo, hi]`` exchanges
    the jobs at ``lo`` and ``hi``; ``fwd[lo, hi]`` moves the job at ``lo``
    to position ``hi``; ``bwd[lo, hi]`` moves the job at ``hi`` to position
    ``lo``.
    """
    seq = np.asarray(seq, dtype=np.int64)
    n = len(seq)
    ps, ws, ds = p[seq].astype(float), w[seq].astype(float), d[seq].astype(float)
    C = start + np.cumsum(ps)
    f = ws * np.maximum(0.0, C - ds)
    lo, hi = np.triu_indices(n, 1)

    def cost_at(pos, t):
        return ws[pos] * np.maximum(0.0, t - ds[pos])

    # cumulative cost changes of positions 0..n-1 when shifted by s (one row per shift value)
    def shifted_cumsum(shifts):
        table = ws[None, :] * np.maximum(0.0, C[None, :] + shifts[:, None] - ds[None, :]) - f[None, :]
        return np.concatenate([np.zeros((len(shifts), 1)), np.cumsum(table, axis=1)], axis=1)

    neg = np.full((n, n), -np.inf)
    # swaps: the middle jobs shift by delta = p_hi - p_lo
    delta = ps[hi] - ps[lo]
    uniq, which = np.unique(delta, return_inverse=True)
    cs = shifted_cumsum(uniq)
    mid = cs[which, hi] - cs[which, lo + 1]              # positions lo+1 .. hi-1
    swap = neg.copy()
    swap[lo, hi] = (f[lo] + f[hi]) - cost_at(hi, C[lo] + delta) - cost_at(lo, C[hi]) - mid
    # forward insertion lo -> hi: positions lo+1..hi shift left by p_lo
    csf = shifted_cumsum(-ps)                            # row = the moved position
    midf = csf[lo, hi + 1] - csf[lo, lo + 1]
    fwd = neg.copy()
    fwd[lo, hi] = f[lo] - cost_at(lo, C[hi]) - midf
    # backward insertion hi -> lo: positions lo..hi-1 shift right by p_hi
    csb = shifted_cumsum(ps)
    midb = csb[hi, hi] - csb[hi, lo]
    bwd = neg.copy()
    bwd[lo, hi] = f[hi] - cost_at(hi, C[lo] - ps[lo] + ps[hi]) - midb
    return swap, fwd, bwd


def _select(lo, hi, g, n: int) -> tuple[float, list[int]]:
    """The dynasearch recursion over a sparse list of moves (``lo[i] < hi[i]``, gain ``g[i] > 0``).

    Near a local minimum only a handful of the ``n (n - 1) / 2`` intervals
    carry a positive gain, so the recursion runs over those moves (sorted by
    right end) instead of over all ``(lo, hi)`` pairs: ``O(n + m)`` Python
    steps for ``m`` moves rather than ``n`` numpy calls. Returns the total and
    the indices of the chosen moves, left to right.
    """
    order = sorted(range(len(g)), key=lambda i: (hi[i], lo[i]))
    F = [0.0] * (n + 1)
    choice = [-1] * (n + 1)
    k = 0                                   # F[0..k] is final
    for i in order:
        a, b, v = int(lo[i]), int(hi[i]), float(g[i])
        while k < b + 1:                    # F is flat between move ends
            k += 1
            F[k] = F[k - 1]
        cand = F[a] + v
        if cand > F[k]:
            F[k], choice[k] = cand, i
    total = F[k]
    chosen = []
    while k > 0:
        if choice[k] >= 0:
            chosen.append(choice[k])
            k = int(lo[choice[k]])
        else:
            k -= 1
    return total, chosen[::-1]


@known_options
def best_independent_moves(gain: np.ndarray, eps: float = 0.0) -> tuple[float, list[tuple[int, int]]]:
    """Best total gain of moves on disjoint intervals (the dynasearch recursion).

    ``gain[lo, hi]`` is the best gain of a move on ``[lo, hi]`` (``-inf``
    where none). Returns the total and the chosen intervals (left to right);
    only moves with gain ``> eps`` are taken. This is the recursion of
    Congram, Potts & van de Velde (2002), Sec. 2,
    ``F(k) = max(F(k-1), max_lo F(lo) + G(lo, k-1))``, evaluated over the
    intervals with a positive gain only (the others never enter a maximum).

    Examples
    --------
    >>> g = np.full((4, 4), -np.inf); g[0, 1] = 3; g[1, 2] = 5; g[2, 3] = 4
    >>> best_independent_moves(g)
    (7.0, [(0, 1), (2, 3)])
    """
    n = gain.shape[0]
    lo, hi = np.nonzero(np.triu(gain > max(eps, 0.0), 1))
    total, chosen = _select(lo, hi, gain[lo, hi], n)
    return float(total), [(int(lo[i]), int(hi[i])) for i in chosen]


@known_options
def apply_moves(seq: np.ndarray, moves, kinds) -> np.ndarray:
    """Apply independent moves; ``kinds[i]`` is 0 (swap), 1 (forward) or 2 (backward insertion)."""
    out = np.array(seq, copy=True)
    for (lo, hi), kind in zip(moves, kinds):
        if kind == 0:
            out[lo], out[hi] = seq[hi], seq[lo]
        elif kind == 1:
            out[lo:hi] = seq[lo + 1:hi + 1]
            out[hi] = seq[lo]
        else:
            out[lo + 1:hi + 1] = seq[lo:hi]
            out[lo] = seq[hi]
    return out


class _Gains:
    """Every move's gain on one instance, as ``(n, n)`` arrays (entry ``[lo, hi]``).

    The same arithmetic as :func:`move_gains`, arranged so that a step is a
    few whole-array operations: every shift a move can impose on the jobs
    between its ends (``p_b - p_a`` for a swap, ``-p_a`` and ``+p_b`` for the
    insertions) is known from the instance alone, so one table of
    cumulative shifted costs, a column per distinct shift, serves every move
    of a step; on integer data with ``p <= 100`` it has about 200 columns.
    With too many distinct shifts (real-valued data) it falls back to
    :func:`move_gains`, whose table has a row per swap of the sequence.
    """

    def __init__(self, p, w, d, start: float = 0.0):
        self.p, self.w, self.d = (np.asarray(x, dtype=float) for x in (p, w, d))
        self.start = float(start)
        n = self.n = len(self.p)
        self.upper = np.triu(np.ones((n, n), dtype=bool), 1)
        shifts = np.unique(np.concatenate([(self.p[None, :] - self.p[:, None]).ravel(), -self.p, self.p]))
        self.shifts = shifts if len(shifts) <= 4 * n + 1 else None
        if self.shifts is not None:
            self.row_diff = np.searchsorted(shifts, self.p[None, :] - self.p[:, None])
            self.row_neg = np.searchsorted(shifts, -self.p)
            self.row_pos = np.searchsorted(shifts, self.p)
            self.buf = np.empty((n, len(shifts)))
            self.cs = np.zeros((n + 1, len(shifts)))

    def full(self, seq: np.ndarray, a: int = 0, b: int | None = None):
        """``(swap, fwd, bwd, f)``: the gain tables of :func:`move_gains`
        restricted to the block ``lo <= b``, ``hi >= a`` (entry ``[lo, hi - a]``;
        the entries with ``lo >= hi`` are garbage) and the cost of each position."""
        n = self.n
        b = n - 1 if b is None else b
        ps, ws, ds = self.p[seq], self.w[seq], self.d[seq]
        C = self.start + np.cumsum(ps)
        f = ws * np.maximum(0.0, C - ds)
        if self.shifts is None:
            return (*(g[:b + 1, a:] for g in move_gains(self.p, self.w, self.d, seq, self.start)), f)
        shifts, cs, x = self.shifts, self.cs, self.buf
        # cs[k, s]: cost change of positions 0..k-1 when all of them are delayed by shifts[s]
        np.add.outer(C - ds, shifts, out=x)
        np.maximum(x, 0.0, out=x)
        x *= ws[:, None]
        x -= f[:, None]
        np.cumsum(x, axis=0, out=cs[1:])
        R = cs.shape[1]
        I, J = np.arange(b + 1), np.arange(a, n)
        pI, wI, dI, CI, fI = ps[:b + 1, None], ws[:b + 1, None], ds[:b + 1, None], C[:b + 1, None], f[:b + 1, None]
        pJ, wJ, dJ, CJ, fJ = ps[a:], ws[a:], ds[a:], C[a:], f[a:]
        # swap [lo, hi]: positions lo+1..hi-1 shift by p_hi - p_lo
        which = self.row_diff[seq[:b + 1, None], seq[None, a:]]
        flat = cs.ravel()
        mid = flat[J * R + which] - flat[(I[:, None] + 1) * R + which]
        late_lo = wI * np.maximum(0.0, CJ - dI)          # the job at lo, completed at C[hi]
        swap = fI + fJ - wJ * np.maximum(0.0, CI + pJ - pI - dJ) - late_lo - mid
        # forward lo -> hi: positions lo+1..hi shift left by p_lo
        A = cs[:, self.row_neg[seq[:b + 1]]]             # A[k, lo]
        fwd = fI - late_lo - (A[J + 1, :].T - A[I + 1, I][:, None])
        # backward hi -> lo: positions lo..hi-1 shift right by p_hi
        B = cs[:, self.row_pos[seq[a:]]]                 # B[k, hi - a]
        bwd = fJ - wJ * np.maximum(0.0, CI - pI + pJ - dJ) - (B[J, J - a] - B[I, :])
        return swap, fwd, bwd, f

    def flat(self, seq: np.ndarray, a: int = 0, b: int | None = None, eps_rel: float = 1e-9):
        """``(lo, hi, gain, kind, cost)``: the moves of the block ``lo <= b``,
        ``hi >= a`` with a gain above the noise level ``eps_rel * max(1, cost)``,
        the best kind (0 swap, 1 fwd, 2 bwd) of each, and the cost of ``seq``."""
        swap, fwd, bwd, f = self.full(seq, a, b)
        cost = float(f.sum())
        g = np.maximum(np.maximum(swap, fwd), bwd)
        upper = self.upper[:g.shape[0], a:]
        lo, hj = np.nonzero((g > eps_rel * max(1.0, abs(cost))) & upper)
        s, fw, bw = swap[lo, hj], fwd[lo, hj], bwd[lo, hj]
        kind = np.where(s >= np.maximum(fw, bw), 0, np.where(fw >= bw, 1, 2))
        return lo, hj + a, g[lo, hj], kind, cost


@known_options
def dynasearch(p, w, d, seq, start: float = 0.0, *, deadline: float | None = None, gains: _Gains | None = None,
               changed: tuple[int, int] | None = None) -> tuple[np.ndarray, float]:
    """Dynasearch descent from ``seq`` to a local minimum of the swap and
    insertion neighbourhoods (several independent moves per step).

    ``changed = (a, b)`` says that ``seq`` differs from a local minimum only
    in positions ``a..b`` (a kick): a move on ``[lo, hi]`` with ``hi < a`` or
    ``lo > b`` then has the same jobs and start time as there, hence no gain,
    and only the block ``lo <= b``, ``hi >= a`` is priced. Each step widens
    the window to the moves it applied, so the descent ends at a true local
    minimum of the whole neighbourhood.
    """
    seq = np.asarray(seq, dtype=np.int64)
    n = len(seq)
    if n < 2:
        return seq, sequence_cost(p, w, d, seq, start)
    gains = gains or _Gains(p, w, d, start)
    a, b = (0, n - 1) if changed is None else changed
    cost = None
    while True:
        if deadline is not None and time.perf_counter() >= deadline and cost is not None:
            return seq, cost
        lo, hi, gain, kind, cost = gains.flat(seq, a, b)
        if len(lo) == 0:
            return seq, cost
        eps = 1e-9 * max(1.0, abs(cost))
        _, chosen = _select(lo, hi, gain, n)
        moves = [(int(lo[i]), int(hi[i])) for i in chosen]
        new = apply_moves(seq, moves, [int(kind[i]) for i in chosen])
        new_cost = sequence_cost(p, w, d, new, start)
        if not new_cost < cost - eps:   # float noise only; never accept a worse sequence
            return seq, cost
        seq = new
        a, b = min(a, moves[0][0]), max(b, moves[-1][1])


def _kick(seq: np.ndarray, rng: np.random.Generator, swaps: int, reach: int) -> tuple[np.ndarray, int, int]:
    """``swaps`` random interchanges of jobs at most ``reach`` positions apart;
    returns the new sequence and the window ``(a, b)`` of positions it changed."""
    out = seq.copy()
    n = len(out)
    a, b = n, -1
    for _ in range(swaps):
        i = int(rng.integers(0, n - 1))
        j = min(n - 1, i + int(rng.integers(1, reach + 1)))
        out[i], out[j] = out[j], out[i]
        a, b = min(a, i), max(b, j)
    return out, a, b


def _starts(p, w, d, start: float) -> list[np.ndarray]:
    """EDD, WSPT and apparent-tardiness-cost orders (the usual constructive rules)."""
    n = len(p)
    pf = p.astype(float)
    orders = [np.lexsort((np.arange(n), d)), np.lexsort((np.arange(n), -(w / pf)))]
    pbar = max(pf.mean(), 1e-12)
    for k in (0.5, 1.0, 2.0):
        left = np.ones(n, dtype=bool)
        t, order = start, []
        for _ in range(n):
            idx = np.flatnonzero(left)
            score = w[idx] / pf[idx] * np.exp(-np.maximum(0.0, d[idx] - pf[idx] - t) / (k * pbar))
            i = int(idx[int(np.argmax(score))])
            order.append(i)
            left[i] = False
            t += pf[i]
        orders.append(np.array(order, dtype=np.int64))
    return orders


def _random_atc(p, w, d, start: float, rng: np.random.Generator) -> np.ndarray:
    """An apparent-tardiness-cost order with a random look-ahead ``k`` and noisy
    priorities: a start for a fresh walk that is good but not the one before."""
    n = len(p)
    pf = p.astype(float)
    k = float(rng.uniform(0.3, 3.0)) * max(pf.mean(), 1e-12)
    noise = np.exp(rng.normal(0.0, 0.3, n))
    left = np.ones(n, dtype=bool)
    t, order = start, []
    for _ in range(n):
        idx = np.flatnonzero(left)
        score = noise[idx] * w[idx] / pf[idx] * np.exp(-np.maximum(0.0, d[idx] - pf[idx] - t) / k)
        i = int(idx[int(np.argmax(score))])
        order.append(i)
        left[i] = False
        t += pf[i]
    return np.array(order, dtype=np.int64)


@known_options
def iterated_dynasearch(p, w, d, *, start: float = 0.0, time_limit: float | None = 1.0,
                        max_iter: int | None = None, seed: int = 0, kick: tuple[int, int] = (2, 5),
                        reach: int = 20, restart: int = 40, target: float | None = None,
                        initial=None, stall: int | None = 120) -> tuple[np.ndarray, float]:
    """Iterated dynasearch (see the module docstring); returns ``(sequence, cost)``.

    Parameters
    ----------
    p, w, d
        Processing times, weights, due dates (numpy arrays).
    start
        Start time of the machine (the common release date).
    time_limit, max_iter
        Stop after this many seconds / kicks (``None``: no limit on that count;
        with ``time_limit=None`` a run is deterministic for a seed).
    kick, reach
        A kick makes ``kick[0]..kick[1]`` random swaps of jobs at most
        ``reach`` positions apart. With swaps at most 6 apart the descent
        after a kick mostly undid it and some instances kept every run in
        the same basin (one 0.63 % above the best value at 1 s and at 3 s);
        at 20 apart, n = 100, 1 s, on generator seeds not used in tuning
        (202 and 303, two run seeds each) the long-run values were reached
        on 99 of 100 runs against 93 of 100 with 6.
    restart
        Kicks without a new best of the walk after which the walk returns to
        its best.
    stall
        Kicks without a new best of the walk after which a new walk starts
        from a randomised ATC order (``None``: one walk). At n = 100 a walk
        settles in a basin within a fraction of a second and kicks of nearby
        swaps do not leave it (the better sequences differ by several
        long-range moves at once), so fresh walks pay more than a longer one;
        120 was the best of 80 / 120 / 150 / 250 / 400 and none in tuning.
    target
        Stop as soon as a sequence of this cost is found (e.g. a known optimum or 0).
    initial
        Extra starting sequences.
    """
    time_limit, seed = opt.time_limit(time_limit), opt.seed(seed)
    if max_iter is not None:
        opt.integer(max_iter, "max_iter", lo=0)
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    rng = np.random.default_rng(seed)
    p = np.asarray(p)
    w = np.asarray(w, dtype=float)
    d = np.asarray(d, dtype=float)
    n = len(p)
    if n == 0:
        return np.zeros(0, dtype=np.int64), 0.0
    floor = 0.0 if target is None else target
    gains = _Gains(p, w, d, start)
    starts = _starts(p, w, d, start) + [np.asarray(s, dtype=np.int64) for s in (initial or [])]
    scored = sorted(((sequence_cost(p, w, d, s, start), k) for k, s in enumerate(starts)))
    best, best_cost = None, math.inf
    for _, k in scored[:3] if initial is None else scored:
        s, c = dynasearch(p, w, d, starts[k], start, deadline=deadline, gains=gains)
        if c < best_cost:
            best, best_cost = s, c
        if best_cost <= floor or (deadline is not None and time.perf_counter() >= deadline):
            break
    cur, cur_cost = best, best_cost
    wbest, wbest_cost = best, best_cost          # best of the current walk
    it = since = wsince = 0
    while best_cost > floor and n >= 2:
        if max_iter is not None and it >= max_iter:
            break
        if deadline is not None and time.perf_counter() >= deadline:
            break
        it += 1
        if stall and wsince >= stall:
            cur, cur_cost = dynasearch(p, w, d, _random_atc(p, w, d, start, rng), start, deadline=deadline, gains=gains)
            wbest, wbest_cost, since, wsince = cur, cur_cost, 0, 0
            if cur_cost < best_cost:
                best, best_cost = cur, cur_cost
            continue
        cand, a, b = _kick(cur, rng, int(rng.integers(kick[0], kick[1] + 1)), reach)
        # cur is a local minimum (a descent cut short by the deadline ends the loop): price only around the kick
        cand, c = dynasearch(p, w, d, cand, start, deadline=deadline, gains=gains, changed=(a, b))
        if c <= cur_cost + 1e-9 * max(1.0, abs(cur_cost)):
            cur, cur_cost = cand, c
        if c < best_cost - 1e-9 * max(1.0, abs(best_cost)):
            best, best_cost = cand, c
        if c < wbest_cost - 1e-9 * max(1.0, abs(wbest_cost)):
            wbest, wbest_cost, since, wsince = cand, c, 0, 0
        else:
            since += 1
            wsince += 1
            if since >= restart:
                cur, cur_cost, since = wbest, wbest_cost, 0
    return best, best_cost
