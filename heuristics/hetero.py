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
  scheme) on per-GPU sequences, compiled with numba
  (:mod:`heuristics.hetero_local`): relocations of a task to any GPU it fits
  and swaps of two tasks, evaluated incrementally along the changed suffixes.

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
# Iterated local search
# ---------------------------------------------------------------------------

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
    compiled search of :func:`heuristics.hetero_local.iterated_local_search`
    on per-GPU sequences (``kick`` default (2, 4) random relocations and
    swaps of tasks, ``restart`` default 100).

    Solution: one sequence per GPU, scheduled semi-actively. Local search:
    relocation of a task to any position of any GPU it fits and swaps of two
    tasks (on one GPU or across two), evaluated exactly and incrementally.
    Starting solutions: EFT list schedules of the arrival, EDD, WSPT and ATC
    orders, each improved by descent; the walk starts from the best.
    Perturbation: ``kick = (lo, hi)`` random relocations or swaps of tasks
    to positions that run at about the same time; the new local optimum is
    accepted when it is no worse (so plateaus are crossed); after
    ``restart`` kicks without a new best, the walk restarts from the best.
    A ``start`` schedule (on several GPUs or with arrivals; every
    schedulable task once, on a GPU it fits) is the only starting solution
    instead (a walk from a given schedule, e.g. a rounded LP solution).
    ``compound`` only concerned the earlier giant-tour search and has no
    effect. Stops at ``max_iter`` kicks or ``time_limit`` seconds
    (whichever comes first; with ``time_limit=None`` the run is
    deterministic for a seed), or when the objective is 0.

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
    # imported here: numba loads only for the several-GPU search
    from heuristics.hetero_local import iterated_local_search

    if start is not None:
        if not isinstance(start, Schedule):
            raise OptionError(f"must be a Schedule, got {type(start).__name__}", field="start")
        seqs = start.sequences(problem)
        placed = sorted(i for s in seqs for i in s)
        if placed != list(np.flatnonzero(problem.eligible.any(axis=1))) or any(
                not problem.eligible[i, g] for g, s in enumerate(seqs) for i in s):
            raise OptionError("must place every task that fits a GPU once, on a GPU it fits", field="start")
        starts = [seqs]
    else:
        found = {}
        for order in _priority_orders(problem):
            seqs, f = _list_sequences(problem, order, "eft")
            found.setdefault(tuple(map(tuple, seqs)), (seqs, f))
        starts = [s for s, _ in sorted(found.values(), key=lambda sf: sf[1])]
    seqs = iterated_local_search(problem, starts, time_limit=time_limit, max_iter=max_iter, seed=seed,
                                 kick=kick or (2, 4), restart=restart or 100)
    return evaluate_sequences(problem, seqs)


#: Name -> heuristic, in the order of the heterogeneous GPU problem statement (then ours).
METHODS: dict[str, Callable[[HeteroProblem], Schedule]] = {
    "fifo": fifo,
    "greedy": greedy,
    "sagreedy": sagreedy,
    "ils": ils,
}
