"""Time-indexed Lagrangian bound for several GPUs with arrival times.

Relaxing "every task runs exactly once" (multipliers ``mu``) splits the
heterogeneous problem into independent path problems, one per GPU: each GPU
runs any tasks it can hold (memory, eq. 3), each at most... any number of
times, idles when it likes, starts no task before its arrival (eq. 5), and
pays ``w_i max(0, C_i - d_i) - mu_i`` per task; the bound is the sum of the
GPUs' shortest paths plus ``sum(mu)``. GPUs of the same speed and memory have
the same path problem, so each class is solved once. The path problems keep
the rules of :mod:`bounds.hetero_ti` (no task twice in a row, no 2-cycle,
adjacent-pair dominance where the interchange respects the arrival, and
elimination of arcs that no schedule better than the incumbent can use), on
one network per class with idle time units.

A schedule no worse than the upper one ends every task ``i`` by
``d_i + ub / w_i``: that caps each GPU's horizon (much shorter than "every
task on this GPU", hence a finer grid) and leaves out every node that alone
costs more than the upper schedule, as the elimination would.

Time is put on a grid of at most :data:`MAX_STEPS` steps per GPU: run times
and arrivals are rounded down, due dates up and weights down, so every real
schedule maps to a path of the relaxation that costs no more (its completion
times rounded down); a task whose run time rounds to 0 steps is taken out of
the path and priced at its earliest completion, at most once per GPU.

Examples
--------
>>> from instances import hetero
>>> pb = hetero.generate(8, gpus=("T4", "V100"), seed=1)
>>> res = multi_bound(pb, time_limit=2)
>>> 0 <= res.bound
True
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bounds.hetero_subgradient import StepScale, deflected
from bounds.hetero_ti import INF, Expired, Network, tardiness_costs
from instances.hetero import HeteroProblem, Schedule
from instances import options as opt
from instances.options import known_options

__all__ = ["MultiBound", "multi_bound", "MAX_STEPS"]

#: Grid steps of the longest GPU horizon.
MAX_STEPS = 1200
#: Starting multipliers are this fraction of the upper schedule's prices: every GPU's path competes
#: for each task, so full prices make each path take too many tasks and the first bounds negative
#: (on n = 20, three GPU types, 25 passes: about twice the bound of full prices or of zero).
START_SCALE = 0.5


@dataclass
class MultiBound:
    """Outcome of :func:`multi_bound`: ``bound`` in user cost units (valid for
    the user's data), ``upper`` the user cost of the schedule used as the
    target, and details in ``info``."""

    bound: float
    upper: float
    info: dict[str, Any] = field(default_factory=dict)


def _eft(problem: HeteroProblem, order) -> Schedule:
    """Earliest-finish-time list schedule of ``order`` (a small heuristic of our own,
    for when no better schedule is given)."""
    from instances.hetero import evaluate_sequences

    p, a, elig = problem.p, problem.arrival, problem.eligible
    avail = np.zeros(problem.m)
    seqs: list[list[int]] = [[] for _ in range(problem.m)]
    for i in order:
        if not elig[i].any():
            continue
        fin = np.where(elig[i], np.maximum(avail, a[i]) + p[i], np.inf)
        g = int(np.argmin(fin))
        avail[g] = fin[g]
        seqs[g].append(int(i))
    return evaluate_sequences(problem, seqs)


def _cost(problem: HeteroProblem, schedule: Schedule) -> float:
    idx = problem.index
    return float(sum(problem.weight[idx[x.task]] * max(0.0, x.end - problem.deadline[idx[x.task]])
                     for x in schedule.assignments))


@known_options
def multi_bound(problem: HeteroProblem, upper: Schedule | None = None, *, time_limit: float | None = 10.0,
                deadline: float | None = None, max_iter: int = 200, max_steps: int = MAX_STEPS,
                step: float = 1.5, patience: int = 6) -> MultiBound:
    """Lagrangian bound of the heterogeneous problem (see the module docstring).

    Parameters
    ----------
    problem
        Any problem (one GPU or several, with or without arrivals).
    upper
        A good schedule (e.g. the ILS's): the target of the multiplier steps
        and the elimination threshold. Without one, an EFT list schedule in
        due-date order is used.
    time_limit, deadline, max_iter
        Budget of the multiplier optimisation.
    max_steps
        Grid steps of the longest GPU horizon.
    """
    time_limit = opt.time_limit(time_limit)
    opt.integer(max_iter, "max_iter", lo=0)
    t0 = time.perf_counter()
    if deadline is None and time_limit is not None:
        deadline = t0 + time_limit
    tasks = np.flatnonzero(problem.eligible.any(axis=1))
    if len(tasks) == 0:
        return MultiBound(0.0, 0.0, {"empty": True})
    if upper is None:
        upper = _eft(problem, np.lexsort((problem.arrival, problem.deadline)))
    ub_user = _cost(problem, upper)
    if ub_user == 0:
        return MultiBound(0.0, 0.0, {"zero": True})
    n = len(tasks)
    p = problem.p[tasks]
    elig = problem.eligible[tasks]
    a = problem.arrival[tasks]
    d = problem.deadline[tasks]
    w = problem.weight[tasks]
    # GPU classes: same speed and memory give the same path problem
    keys = [(g.speed, g.memory) for g in problem.gpus]
    classes: dict[tuple, list[int]] = {}
    for j, key in enumerate(keys):
        if elig[:, j].any():
            classes.setdefault(key, []).append(j)
    reps = [members[0] for members in classes.values()]
    counts = [len(members) for members in classes.values()]
    horizon_real = max(float(a[elig[:, g]].max() + p[elig[:, g], g].sum()) for g in reps)
    if (w > 0).all():
        # a schedule no worse than the upper one ends every task i by d_i + ub / w_i: a much shorter
        # horizon than "everything on one GPU", so a finer grid (only the grid's choice; the networks'
        # horizons below are derived again on the grid, where validity is decided)
        horizon_real = min(horizon_real, float(np.max(d + ub_user / w)))
    R = max_steps / horizon_real
    times = np.concatenate([p[elig], a, d])
    for k in range(7):
        if horizon_real * 10 ** k > max_steps:
            break
        scaled = times * 10 ** k
        if np.all(np.abs(scaled - np.rint(scaled)) <= 1e-9 * np.maximum(1.0, np.abs(scaled))):
            R = 10 ** k     # the data sit exactly on this grid
            break
    Rw = 1
    for k in range(7):
        if np.all(np.abs(w * 10 ** k - np.rint(w * 10 ** k)) < 1e-9):
            Rw = 10 ** k
            break
    else:
        Rw = 10 ** 6
    W = np.floor(w * Rw + 1e-9).astype(np.int64)
    A = np.floor(a * R + 1e-9).astype(np.int64)
    D = np.ceil(d * R - 1e-9).astype(np.int64)
    scale = R * Rw
    # model cost of the upper schedule: its completion times rounded down to the grid
    idx = problem.index
    pos_of = {int(t): i for i, t in enumerate(tasks)}
    ub = 0
    for x in upper.assignments:
        i = pos_of[idx[x.task]]
        ub += int(W[i] * max(0, math.floor(x.end * R + 1e-9) - D[i]))
    ub = float(ub)
    theta = ub - 0.5

    # one network per class
    nets, jobs_of, zero_of = [], [], []
    for g in reps:
        on = np.flatnonzero(elig[:, g])
        P = np.floor(p[on, g] * R + 1e-9).astype(np.int64)
        H = int(math.ceil(horizon_real * R - 1e-9))
        if (W[on] >= 1).all():
            # a schedule of model cost <= theta ends task i by D_i + theta / W_i: nothing runs later
            H = max(1, min(H, int((D[on] + np.floor(theta / W[on])).max())))
        pos, zero = on[P >= 1], on[P < 1]
        Pp = P[P >= 1]
        net = None
        if len(pos):
            cost = tardiness_costs(Pp, W[pos], D[pos], T=H)
            try:
                # nodes dearer than theta by themselves carry no schedule of interest (as in elimination)
                net = Network(Pp, cost, weights=W[pos], release=A[pos], horizon=H, idle=True, deadline=deadline,
                              max_cost=theta)
            except Expired:
                return MultiBound(0.0, ub_user, {"skipped": "time limit reached while building the networks"})
        nets.append(net)
        jobs_of.append(pos)
        zero_of.append(zero)
    def evaluate(mu):
        total = float(mu.sum())
        cnt = np.zeros(n)
        per = []
        for net, jobs, zero, m in zip(nets, jobs_of, zero_of, counts):
            val = 0.0
            if net is not None:
                fw = net.forward(mu[jobs])
                if not math.isfinite(fw.value):
                    return INF, None, None
                path = net.path(fw)
                cnt[jobs] += m * net.counts(path)
                val = fw.value
                per.append(fw)
            else:
                per.append(None)
            if len(zero):
                z = W[zero] * np.maximum(0, A[zero] - D[zero]) - mu[zero]
                take = z < 0
                val += float(z[take].sum())
                cnt[zero[take]] += m
            total += m * val
        return total, cnt, per

    # multipliers: each task's cost in the upper schedule plus its run time priced at the weight of
    # the late tasks after it on its GPU (the time-indexed LP's complementary-slackness prices, as in
    # bounds.hetero_subgradient.initial_multipliers; idle gaps make them approximate, any mu is valid)
    mu = np.zeros(n)
    by_gpu: dict[str, list] = {}
    for x in upper.assignments:
        by_gpu.setdefault(x.gpu, []).append(x)
    for xs in by_gpu.values():
        xs.sort(key=lambda x: x.end)
        late_after = 0.0
        for x in reversed(xs):
            i = pos_of[idx[x.task]]
            C = math.floor(x.end * R + 1e-9)
            mu[i] = START_SCALE * (W[i] * max(0, C - D[i]) + (x.end - x.start) * R * late_after)
            if C > D[i]:
                late_after += W[i]
    rule, evals, reduced = StepScale(step, patience), 0, True   # networks built capped at theta
    since = 0
    d_prev = None
    while evals < max_iter:
        if deadline is not None and time.perf_counter() >= deadline and evals > 0:
            break
        L, cnt, per = evaluate(mu)
        evals += 1
        if not math.isfinite(L):
            rule.best = INF
            break
        if rule.record(L):
            since += 1
        if rule.best > theta or rule.scale < 1e-4:
            break
        if evals == 1 or since >= 8:
            since = 0
            removed = 0
            for c, (net, jobs, m) in enumerate(zip(nets, jobs_of, counts)):
                if net is None:
                    continue
                # a path through an arc on one copy of this class, plus the best paths of
                # every other copy and class, bounds any schedule that uses the arc
                own = per[c].value
                rest = L - own - float(mu[jobs].sum())
                removed += net.eliminate(mu[jobs], theta - rest, fw=per[c])
            if removed:
                reduced = True
                continue
        g = 1.0 - cnt
        if not g.any():
            break
        dvec = d_prev = deflected(g, d_prev)
        mu = mu + rule.scale * (ub - L) / float(dvec @ dvec) * dvec
    best = rule.best
    model = min(best, ub) if (reduced or best > theta) else best
    if best > theta:
        model = ub
    model = min(float(math.ceil(model - 1e-6 * max(1.0, abs(model)))), ub) if math.isfinite(model) else ub
    bound = max(0.0, model / scale)
    return MultiBound(bound, ub_user, {"grid": 1.0 / R, "weight_grid": 1.0 / Rw, "classes": len(reps),
                                       "evaluations": evals, "seconds": time.perf_counter() - t0,
                                       "model_upper": ub})
