"""Heuristics for weighted tardiness on heterogeneous GPUs (heterogeneous-GPU scheduling paper, Sec. III).

- :func:`fifo`: Sec. III.A, arrival order, GPU with the earliest start.
- :func:`greedy`: Sec. III.B, arrival order, GPU with the earliest finish (EFT).
- :func:`sagreedy`: Sec. III.C, simulated annealing over task orderings,
  each ordering evaluated by EFT list scheduling (eq. 14), exponential
  cooling, tardy-task prioritisation with ratio rho of eq. (15).
- :func:`ils`: our stronger method. On one machine with a common arrival
  time (the OR-Library case, 1||sum w_j T_j) it is iterated dynasearch
  (Congram, Potts & van de Velde 2002, with the insertion moves of Grosso,
  Della Croce & Tadei 2004; :mod:`heuristics.hetero_dynasearch`): the best
  set of independent swaps and insertions is chosen by dynamic programming,
  and local minima are kicked by random swaps of nearby jobs. Otherwise
  (several GPUs, or arrival times, where the gains of independent moves no
  longer add up) it is an iterated local search (Lourenco, Martin & Stuetzle's
  scheme) on a "giant tour" that encodes the sequence of every GPU, so one
  swap/insert neighbourhood moves tasks within a GPU and between GPUs; whole
  neighbourhoods are evaluated at once with numpy and disjoint improving
  moves are combined greedily.

Every function returns an :class:`instances.hetero.Schedule`; tasks that fit
no GPU (memory, eq. 3) are listed in ``schedule.unscheduled``, never dropped
silently. All schedules are semi-active (each task starts at
``max(a_i, end of the previous task on its GPU)``).

Examples
--------
>>> from instances import hetero
>>> pb = hetero.generate(10, seed=2)
>>> [round(hetero.weighted_tardiness(pb, f(pb))) >= 0 for f in (fifo, greedy, sagreedy, ils)]
[True, True, True, True]
"""

from __future__ import annotations

import math
import time
from functools import lru_cache
from typing import Callable, Sequence

import numpy as np

from heuristics.hetero_dynasearch import iterated_dynasearch
from instances import options as opt
from instances.errors import OptionError
from instances.hetero import HeteroProblem, Schedule, evaluate_sequences
from instances.options import known_options

__all__ = ["fifo", "greedy", "list_schedule", "sagreedy", "ils", "METHODS", "objective",
           "single_machine_view"]


@known_options
def objective(problem: HeteroProblem, sequences: Sequence[Sequence[int]]) -> float:
    """Total weighted tardiness (eq. 1) of the semi-active schedule of per-GPU sequences."""
    p, a, d, w = problem.p, problem.arrival, problem.deadline, problem.weight
    total = 0.0
    for j, seq in enumerate(sequences):
        t = 0.0
        for i in seq:
            t = max(a[i], t) + p[i, j]
            if t > d[i]:
                total += w[i] * (t - d[i])
    return float(total)


def _arrival_order(problem: HeteroProblem) -> list[int]:
    # stable: ties in arrival keep the input order
    return sorted(range(problem.n), key=lambda i: problem.tasks[i].arrival)


def _list_sequences(problem: HeteroProblem, order: Sequence[int], rule: str = "eft"):
    """List scheduling of ``order``: each task goes to the valid GPU with the
    earliest start (``rule='est'``, FIFO) or earliest finish (``'eft'``,
    Greedy); ties go to the lowest GPU index. Returns (sequences, objective)."""
    p, a, d, w = problem.p, problem.arrival, problem.deadline, problem.weight
    elig = problem.eligible
    avail = [0.0] * problem.m
    seqs: list[list[int]] = [[] for _ in range(problem.m)]
    total = 0.0
    for i in order:
        best, best_key = -1, None
        for j in range(problem.m):
            if not elig[i, j]:
                continue
            s = a[i] if a[i] > avail[j] else avail[j]
            key = s if rule == "est" else s + p[i, j]
            if best_key is None or key < best_key:
                best, best_key = j, key
        if best < 0:
            continue  # fits no GPU: reported via problem.unfit
        s = max(a[i], avail[best])
        avail[best] = s + p[i, best]
        seqs[best].append(i)
        if avail[best] > d[i]:
            total += w[i] * (avail[best] - d[i])
    return seqs, float(total)


@known_options
def list_schedule(problem: HeteroProblem, order: Sequence[int], rule: str = "eft") -> Schedule:
    """Schedule tasks in ``order`` (indices) by list scheduling, ``rule`` 'eft' or 'est'.

    Examples
    --------
    >>> from instances import hetero
    >>> pb = hetero.orlib_wt40(1)
    >>> hetero.weighted_tardiness(pb, list_schedule(pb, range(40)))  # identity order
    16672.0
    """
    if rule not in ("eft", "est"):
        raise OptionError(f"rule must be 'eft' or 'est', got {rule!r}")
    seqs, _ = _list_sequences(problem, list(order), rule)
    return evaluate_sequences(problem, seqs)


@known_options
def fifo(problem: HeteroProblem) -> Schedule:
    """FIFO baseline (heterogeneous-GPU scheduling paper, Sec. III.A): arrival order, earliest-start GPU.

    Examples
    --------
    >>> from instances import hetero
    >>> pb = hetero.generate(6, gpus=("T4", "H100"), seed=1)
    >>> hetero.check(pb, fifo(pb))
    []
    """
    return list_schedule(problem, _arrival_order(problem), "est")


@known_options
def greedy(problem: HeteroProblem) -> Schedule:
    """Greedy EFT (heterogeneous-GPU scheduling paper, Sec. III.B): arrival order, earliest-finish GPU.

    Examples
    --------
    >>> from instances import hetero
    >>> pb = hetero.generate(6, gpus=("T4", "H100"), seed=1)
    >>> hetero.check(pb, greedy(pb))
    []
    """
    return list_schedule(problem, _arrival_order(problem), "eft")


# ---------------------------------------------------------------------------
# SAGreedy (heterogeneous-GPU scheduling paper, Sec. III.C)
# ---------------------------------------------------------------------------

def _completions(problem: HeteroProblem, seqs) -> np.ndarray:
    c = np.zeros(problem.n)
    p, a = problem.p, problem.arrival
    for j, seq in enumerate(seqs):
        t = 0.0
        for i in seq:
            t = max(a[i], t) + p[i, j]
            c[i] = t
    return c


@known_options
def sagreedy(problem: HeteroProblem, *, t_initial: float | None = None, t_min: float | None = None,
             alpha: float = 0.98, max_iter: int = 1000, seed: int = 0) -> Schedule:
    """SAGreedy (heterogeneous-GPU scheduling paper, Sec. III.C), as described there.

    1. Start from the Greedy (EFT) solution (arrival order).
    2. Exponential cooling ``T_{k+1} = alpha T_k`` from ``t_initial`` down to
       ``t_min`` (or ``max_iter`` steps).
    3. Neighbour: let tau be the tardy tasks of the current solution
       (``c_i > d_i``) and rho the ratio of eq. (15),
       ``min(0.8, max(0.1, (T - T_min) / (T_initial - T_min)))``. The top
       ``ceil(rho |tau|)`` tardy tasks go first in the new ordering, the other
       tasks follow in arrival order.
    4. Accept a worse neighbour with probability ``exp(-Delta / T)``.
    5. Every ordering is evaluated by greedy EFT list scheduling; fitness is
       the total weighted tardiness (eq. 14). The best solution seen is returned.

    The problem statement leaves open what "top" means and how the prioritised tasks are
    ordered among themselves; we rank tardy tasks by weighted tardiness
    ``w_i (c_i - d_i)`` (largest first) and put the selected ones first in a
    random order, which is where the neighbour's randomness comes from. The
    seed gives no parameter values: ``t_initial`` defaults to 10% of the
    Greedy fitness (at least 1), ``t_min`` to ``1e-3 t_initial``.

    Examples
    --------
    >>> from instances import hetero
    >>> pb = hetero.generate(10, seed=4)
    >>> hetero.weighted_tardiness(pb, sagreedy(pb)) <= hetero.weighted_tardiness(pb, greedy(pb))
    True
    """
    rng = np.random.default_rng(opt.seed(seed))
    opt.integer(max_iter, "max_iter", lo=0)
    base = _arrival_order(problem)
    rank_in_arrival = {i: k for k, i in enumerate(base)}
    d, w = problem.deadline, problem.weight
    cur_order = base
    cur_seqs, cur_f = _list_sequences(problem, cur_order, "eft")
    best_seqs, best_f = cur_seqs, cur_f
    T0 = max(1.0, 0.1 * cur_f) if t_initial is None else float(t_initial)
    Tmin = 1e-3 * T0 if t_min is None else float(t_min)
    if not (T0 > Tmin > 0 and 0 < alpha < 1):
        raise OptionError("need t_initial > t_min > 0 and 0 < alpha < 1")
    T = T0
    for _ in range(max_iter):
        if T < Tmin or best_f == 0:
            break
        c = _completions(problem, cur_seqs)
        scheduled = [i for seq in cur_seqs for i in seq]
        tardy = [i for i in scheduled if c[i] > d[i]]
        if not tardy:
            break
        rho = min(0.8, max(0.1, (T - Tmin) / (T0 - Tmin)))               # eq. (15)
        k = max(1, math.ceil(rho * len(tardy)))
        tardy.sort(key=lambda i: -w[i] * (c[i] - d[i]))
        top = [tardy[x] for x in rng.permutation(k)]
        chosen = set(top)
        order = top + sorted((i for i in base if i not in chosen), key=rank_in_arrival.__getitem__)
        seqs, f = _list_sequences(problem, order, "eft")
        delta = f - cur_f
        if delta <= 0 or rng.random() < math.exp(-delta / T):
            cur_order, cur_seqs, cur_f = order, seqs, f
            if f < best_f:
                best_seqs, best_f = seqs, f
        T *= alpha
    return evaluate_sequences(problem, best_seqs)


# ---------------------------------------------------------------------------
# Iterated local search on a giant tour
# ---------------------------------------------------------------------------

#: Moves span at most this many positions (the full neighbourhood for tours
#: up to WINDOW + 1 tokens, e.g. all OR-Library n = 40 instances); this keeps
#: a neighbourhood batch O(N * WINDOW) rows for large instances.
WINDOW = 60


@lru_cache(maxsize=64)
def _moves(N: int, window: int = WINDOW) -> np.ndarray:
    """Index matrix of every swap (i<j) and insert (remove at i, insert at j,
    j not in {i, i-1}) with ``|i - j| <= window`` of a sequence of length N:
    row r applied as seq[rows[r]]."""
    i, j = np.meshgrid(np.arange(N), np.arange(N), indexing="ij")
    i, j = i.ravel(), j.ravel()
    k = np.arange(N)[None, :]
    span = np.abs(i - j) <= window
    # swaps: positions i < j exchanged
    sw = span & (i < j)
    si, sj = i[sw, None], j[sw, None]
    swaps = np.where(k == si, sj, np.where(k == sj, si, k))
    # inserts: the token at i moves to position j (j not in {i, i-1}: those
    # repeat the identity or an adjacent swap)
    ins = span & (j != i) & (j != i - 1)
    ii, jj = i[ins, None], j[ins, None]
    fwd = ii < jj  # later tokens between i and j shift left
    inserts = np.where(k == jj, ii,
                       np.where(fwd & (k >= ii) & (k < jj), k + 1,
                                np.where(~fwd & (k > jj) & (k <= ii), k - 1, k)))
    return np.vstack([swaps, inserts]).astype(np.intp).reshape(-1, N)


class _Tour:
    """Cost tables of the giant-tour encoding.

    Tokens ``0..ns-1`` are the schedulable tasks, tokens ``ns..ns+m-2`` are
    separators: everything after separator ``ns+g-1`` (until the next one)
    runs on GPU ``g``, tokens before the first separator run on GPU 0.
    """

    PENALTY = 1e15  # cost of a task on a GPU it does not fit (never accepted)

    def __init__(self, problem: HeteroProblem):
        self.problem = problem
        self.tasks = np.flatnonzero(problem.eligible.any(axis=1))
        ns, m = len(self.tasks), problem.m
        self.ns, self.m, self.N = ns, m, ns + m - 1
        pad = m - 1
        self.p = np.vstack([problem.p[self.tasks], np.zeros((pad, m))])
        self.pen = np.vstack([np.where(problem.eligible[self.tasks], 0.0, self.PENALTY),
                              np.zeros((pad, m))])
        self.a = np.concatenate([problem.arrival[self.tasks], np.zeros(pad)])
        self.d = np.concatenate([problem.deadline[self.tasks], np.zeros(pad)])
        self.w = np.concatenate([problem.weight[self.tasks], np.zeros(pad)])
        self.sep_gpu = np.concatenate([np.zeros(ns, dtype=np.intp), np.arange(1, m)])
        self.no_arrivals = not self.a.any()
        self.big = 2.0 * (float(self.a.max(initial=0.0)) + float(self.p.max(axis=1).sum()) + 1.0)
        if m == 1:
            self.p1 = self.p[:, 0]

    def encode(self, seqs: Sequence[Sequence[int]]) -> np.ndarray:
        pos = {int(t): k for k, t in enumerate(self.tasks)}
        tour = [pos[i] for i in seqs[0]]
        for g in range(1, self.m):
            tour.append(self.ns + g - 1)
            tour.extend(pos[i] for i in seqs[g])
        return np.array(tour, dtype=np.intp)

    def decode(self, tour: np.ndarray) -> list[list[int]]:
        seqs: list[list[int]] = [[] for _ in range(self.m)]
        g = 0
        for tok in tour:
            if tok >= self.ns:
                g = int(self.sep_gpu[tok])
            else:
                seqs[g].append(int(self.tasks[tok]))
        return seqs

    def costs(self, X: np.ndarray) -> np.ndarray:
        """Total weighted tardiness of every tour (row) of ``X``."""
        if self.m == 1:
            pt = self.p1[X]
            P = np.cumsum(pt, axis=1)
            if self.no_arrivals:
                C = P
            else:
                # C_k = max_{l<=k} (a_l + p_l + ... + p_k), the closed form of
                # C_k = max(a_k, C_{k-1}) + p_k with C_0 = 0
                C = P + np.maximum.accumulate(self.a[X] - (P - pt), axis=1)
            return (self.w[X] * np.maximum(C - self.d[X], 0.0)).sum(axis=1)
        # Several GPUs: the same closed form per segment of the tour. Adding
        # seg * BIG (BIG above any in-segment value range) to the terms makes
        # the running maximum restart at every separator; a separator's own
        # term (seg * BIG) is the segment's start at time 0.
        sep = X >= self.ns
        seg = np.cumsum(sep, axis=1)
        pos = np.where(sep, np.arange(X.shape[1]), -1)
        last = np.maximum.accumulate(pos, axis=1)
        g = np.where(last >= 0, self.sep_gpu[np.take_along_axis(X, np.maximum(last, 0), axis=1)], 0)
        pt = self.p[X, g]
        P = np.cumsum(pt, axis=1)
        P = P - np.maximum.accumulate(np.where(sep, P, 0.0), axis=1)
        off = seg * self.big
        C = P + np.maximum.accumulate(self.a[X] - (P - pt) + off, axis=1) - off
        return (self.w[X] * np.maximum(C - self.d[X], 0.0) + self.pen[X, g]).sum(axis=1)


#: Largest batch of moves evaluated at once; bigger neighbourhoods are
#: scanned in random chunks of this size (first chunk with an improvement wins).
CHUNK = 4096


@lru_cache(maxsize=64)
def _spans(N: int, window: int = WINDOW) -> tuple[np.ndarray, np.ndarray]:
    """First and last position each move of :func:`_moves` changes."""
    diff = _moves(N, window) != np.arange(N)
    lo = np.argmax(diff, axis=1)
    hi = N - 1 - np.argmax(diff[:, ::-1], axis=1)
    return lo, hi


def _compound(tour: np.ndarray, M: np.ndarray, lo: np.ndarray, hi: np.ndarray,
              gains: np.ndarray, limit: int = 64) -> np.ndarray | None:
    """Apply several improving moves that touch disjoint position ranges at
    once (largest gain first), a greedy version of dynasearch (Congram, Potts
    & van de Velde 2002). On one machine without arrivals the gains of such
    moves add up exactly; elsewhere the caller re-evaluates the result."""
    order = np.argsort(-gains, kind="stable")[:limit]
    used = np.zeros(len(tour) + 1, dtype=bool)
    new = tour.copy()
    taken = 0
    for r in order:
        if gains[r] <= 0:
            break
        a, b = lo[r], hi[r] + 1
        if used[a:b].any():
            continue
        used[a:b] = True
        new[a:b] = tour[M[r, a:b]]
        taken += 1
    return new if taken > 1 else None


def _descent(tour_obj: _Tour, tour: np.ndarray, cost: float, deadline: float | None = None,
             rng: np.random.Generator | None = None, compound: bool = True):
    """Descent over the swap and insert moves: best improvement when the
    neighbourhood fits one batch (all OR-Library n = 40 instances), else best
    improvement within the first random chunk that improves; with
    ``compound`` the best set of disjoint improving moves is tried too
    (:func:`_compound`). Stops at a local optimum or at ``deadline`` (a
    ``time.perf_counter`` value)."""
    M = _moves(len(tour))
    if len(M) == 0:
        return tour, cost
    lo, hi = _spans(len(tour))
    if len(M) <= CHUNK:
        parts = [np.arange(len(M))]
    else:
        order = (rng or np.random.default_rng(0)).permutation(len(M))
        parts = [order[s:s + CHUNK] for s in range(0, len(M), CHUNK)]
    while True:
        for part in parts:
            if deadline is not None and time.perf_counter() >= deadline:
                return tour, cost
            Mp = M[part]
            cands = tour[Mp]
            cs = tour_obj.costs(cands)
            k = int(np.argmin(cs))
            eps = 1e-9 * max(1.0, abs(cost))
            if cs[k] < cost - eps:
                best, best_cost = cands[k], float(cs[k])
                if compound:
                    new = _compound(tour, Mp, lo[part], hi[part], np.where(cs < cost - eps, cost - cs, 0.0))
                    if new is not None:
                        c = float(tour_obj.costs(new[None, :])[0])
                        if c < best_cost:
                            best, best_cost = new, c
                tour, cost = best, best_cost
                break
        else:
            return tour, cost


def _priority_orders(problem: HeteroProblem) -> list[list[int]]:
    """Constructive orders for the starting solutions: arrival, EDD, weighted
    shortest processing time, and apparent tardiness cost (ATC, Vepsalainen
    & Morton 1987) at a few look-ahead values, all on the fastest-eligible
    run time."""
    p = np.where(problem.eligible, problem.p, np.inf).min(axis=1)
    p = np.where(np.isfinite(p), p, problem.p.min(axis=1))
    a, d, w = problem.arrival, problem.deadline, problem.weight
    orders = [_arrival_order(problem), list(np.lexsort((a, d))), list(np.argsort(p / np.maximum(w, 1e-12), kind="stable"))]
    # ATC is dynamic: pick the next task at time t by w/p exp(-max(0, d - p - t)/(k pbar))
    pbar = max(p.mean(), 1e-12) if len(p) else 1.0
    speed = problem.m
    for kk in (0.5, 1.0, 2.0, 4.0):
        left = list(range(problem.n))
        t, order = 0.0, []
        while left:
            L = np.array(left)
            tt = max(t, a[L].min())
            ready = L[a[L] <= tt]
            score = w[ready] / p[ready] * np.exp(-np.maximum(0.0, d[ready] - p[ready] - tt) / (kk * pbar))
            i = int(ready[int(np.argmax(score))])
            order.append(i)
            left.remove(i)
            t = tt + p[i] / speed  # fluid clock of m machines
        orders.append(order)
    return orders


@known_options
def single_machine_view(problem: HeteroProblem):
    """``(gpu, tasks, start)`` when every schedulable task can only use one
    GPU and all arrive together (the single-machine case), else ``None``."""
    tasks = np.flatnonzero(problem.eligible.any(axis=1))
    if len(tasks) == 0:
        return None
    usable = np.flatnonzero(problem.eligible[tasks].any(axis=0))
    a = problem.arrival[tasks]
    if len(usable) != 1 or np.ptp(a) > 0:
        return None
    return int(usable[0]), tasks, float(a[0])


@known_options
def ils(problem: HeteroProblem, *, time_limit: float | None = 1.0, max_iter: int | None = None,
        seed: int = 0, kick: tuple[int, int] | None = None, restart: int | None = None,
        compound: bool = True, start: Schedule | None = None) -> Schedule:
    """Iterated local search for total weighted tardiness (see the module docstring).

    On one machine with a common arrival this runs
    :func:`heuristics.hetero_dynasearch.iterated_dynasearch` (``kick``
    default (2, 5) random swaps of jobs at most 20 positions apart,
    ``restart`` default 40, a fresh walk from a
    randomised ATC order after 120 kicks without progress); otherwise the
    giant-tour search below (``kick`` default (4, 8), ``restart`` 50).

    Solution: a giant tour (per-GPU sequences joined by separator tokens).
    Local search: best-improvement descent over all swaps and inserts of the
    tour (spanning at most :data:`WINDOW` positions; large neighbourhoods are
    scanned in random chunks of :data:`CHUNK` moves), evaluated as numpy batches (a move across a separator moves a
    task to another GPU; a move onto a GPU the task does not fit is priced
    prohibitively). Starting solutions: EFT list schedules of the arrival,
    EDD, WSPT and ATC orders, each improved by descent. Perturbation: a
    random permutation of a window of ``kick = (lo, hi)`` consecutive
    tokens of the incumbent; the new local optimum is accepted when it is no
    worse (so plateaus are crossed); after ``restart`` iterations
    without a new best, the walk restarts from the best. A feasible
    ``start`` schedule (on several GPUs or with arrivals) is the only
    starting solution instead (a walk from a given schedule, e.g. a rounded
    LP solution). Stops at
    ``max_iter`` iterations or ``time_limit`` seconds (whichever comes first;
    with ``time_limit=None`` the run is deterministic for a seed), or when
    the objective is 0.

    Examples
    --------
    >>> from instances import hetero
    >>> pb = hetero.orlib_wt40(1)
    >>> hetero.weighted_tardiness(pb, ils(pb, time_limit=None, max_iter=30))
    913.0
    """
    time_limit, seed = opt.time_limit(time_limit), opt.seed(seed)
    if max_iter is not None:
        opt.integer(max_iter, "max_iter", lo=0)
    view = single_machine_view(problem)
    if view is not None:
        g, tasks, start = view
        p = problem.p[tasks, g]
        seq, _ = iterated_dynasearch(p, problem.weight[tasks], problem.deadline[tasks], start=start,
                                     time_limit=time_limit, max_iter=max_iter, seed=seed,
                                     kick=kick or (2, 5), restart=restart or 40)
        seqs: list[list[int]] = [[] for _ in range(problem.m)]
        seqs[g] = [int(tasks[j]) for j in seq]
        return evaluate_sequences(problem, seqs)
    kick = kick or (4, 8)
    restart = restart or 50
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    rng = np.random.default_rng(seed)
    enc = _Tour(problem)
    if enc.ns == 0:
        return evaluate_sequences(problem, [[] for _ in range(problem.m)])
    best_tour, best_cost = None, math.inf
    starts = {}
    if start is not None:
        if not isinstance(start, Schedule):
            raise OptionError(f"must be a Schedule, got {type(start).__name__}", field="start")
        seqs = start.sequences(problem)
        starts[tuple(map(tuple, seqs))] = (seqs, objective(problem, seqs))
    for order in [] if start is not None else _priority_orders(problem):
        seqs, f = _list_sequences(problem, order, "eft")
        key = tuple(map(tuple, seqs))
        if key not in starts:
            starts[key] = (seqs, f)
    for seqs, _ in sorted(starts.values(), key=lambda sf: sf[1]):
        tour = enc.encode(seqs)
        tour, c = _descent(enc, tour, float(enc.costs(tour[None, :])[0]), deadline, rng, compound)
        if c < best_cost:
            best_tour, best_cost = tour, c
        if best_cost == 0 or (deadline is not None and time.perf_counter() >= deadline):
            break
    cur_tour, cur_cost = best_tour, best_cost
    N = enc.N
    it = since = 0
    while best_cost > 0 and N >= 2:
        if max_iter is not None and it >= max_iter:
            break
        if deadline is not None and time.perf_counter() >= deadline:
            break
        it += 1
        tour = cur_tour.copy()
        # kick: shuffle a random window of 4..8 consecutive tokens (a local
        # shake that keeps most of the good sequence)
        L = min(N, int(rng.integers(kick[0], kick[1] + 1)))
        i = int(rng.integers(0, N - L + 1))
        tour[i:i + L] = rng.permutation(tour[i:i + L])
        tour, c = _descent(enc, tour, float(enc.costs(tour[None, :])[0]), deadline, rng, compound)
        if c <= cur_cost + 1e-9 * max(1.0, abs(cur_cost)):
            cur_tour, cur_cost = tour, c
        if c < best_cost - 1e-9 * max(1.0, abs(best_cost)):
            best_tour, best_cost, since = tour, c, 0
        else:
            since += 1
            if since >= restart:
                cur_tour, cur_cost, since = best_tour, best_cost, 0
    return evaluate_sequences(problem, enc.decode(best_tour))


#: Name -> heuristic, in the order of the heterogeneous GPU problem statement (then ours).
METHODS: dict[str, Callable[[HeteroProblem], Schedule]] = {
    "fifo": fifo,
    "greedy": greedy,
    "sagreedy": sagreedy,
    "ils": ils,
}
