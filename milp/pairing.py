"""Exact references for co-scheduling job sets (co-scheduling paper, Sec. 3.2), C = 1, 2, 3.

The problem of Sec. 3.2 with the hardware configuration of each job set
already optimised (Sec. 4.2) is a set partitioning problem: choose job sets
``S`` (singletons, pairs and, for ``C = 3``, triples) covering each job of the
window exactly once, minimising the sum of their times ``c_S``
(``SoloRunAppTime(P_total)`` for a singleton, the best ``CoRunTime`` for a
co-run). The set times are the family's cost model
(:func:`instances.pairing.costs_of`), so for ``C = 2`` the optimum must equal
Algorithm 1's matching total::

    min  sum_S c_S x_S   s.t.  sum_{S ni j} x_S = 1  for every job j,   x_S in {0, 1}

A co-run set slower than its jobs' solo runs is left out (running them alone
is never worse and is what Algorithm 1, lines 19-31, does).

Backends of :func:`solve`:

- ``"cpsat"``: OR-Tools CP-SAT, one Boolean per set. Set times become
  integers of ``resolution`` seconds, chosen from the data
  (:func:`resolution_for`) and rounded *down*, so the integer optimum times
  the resolution is a valid bound for the true times; the returned plan's
  objective is re-evaluated with the true times. If the two differ by more
  than :data:`milp.TOLERANCE`, the model is solved again with a finer
  resolution while time is left, else the result is FEASIBLE with its true
  gap.
- ``"highs"``: Pyomo, solved by HiGHS with zero gap, the set times divided
  by a data-derived scale so that tiny and huge times meet the same
  tolerances.

Both start from Algorithm 1's plan (``hint=True``): a time-limited solve
returns at least that plan, FEASIBLE, with a valid bound. Every plan passes
:func:`instances.pairing.check` before it is returned.

Examples
--------
>>> from instances import pairing
>>> from milp import solve_optimal
>>> q = pairing.WeightedQueue.random(8, seed=2)
>>> a = solve_optimal(q, backend="cpsat", time_limit=20)
>>> b = solve_optimal(q, backend="highs", time_limit=20)
>>> str(a.status), str(b.status), abs(a.objective - b.objective) <= 1e-6 * a.objective
('OPTIMAL', 'OPTIMAL', True)
"""

from __future__ import annotations

import math
import numbers
import time
from typing import Any

import numpy as np

from heuristics.pairing import algorithm1
from instances import options as opt
from instances.errors import OptionError, SolverError
from instances.options import Deadline, known_options
from instances.pairing import Costs, PairingProblem, Plan, WeightedQueue, check, costs_of
from milp import cpsat
from milp.highs import solve_highs
from milp.result import TOLERANCE, Result

__all__ = ["solve", "candidate_sets", "resolution_for", "BACKENDS"]

BACKENDS = ("cpsat", "highs")

#: Share of :data:`milp.TOLERANCE` that the rounding of set times may cost.
_ROUNDING_SHARE = 0.1
#: The sum of all integer set times stays below this (CP-SAT rejects models that may overflow int64).
_INT_BUDGET = 2.0 ** 60
#: HiGHS solves with tolerances near 1e-9 of the scaled objective; its bound is lowered by this much.
_HIGHS_MARGIN = 1e-9


@known_options
def candidate_sets(costs: Costs, concurrency: int) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """Every allowed job set with a finite time that does not lose to its solo runs, and those times.

    Examples
    --------
    >>> from instances import pairing
    >>> sets, c = candidate_sets(pairing.costs_of(pairing.WeightedQueue.random(4, seed=0)), 2)
    >>> len(sets) <= 10 and all(len(s) <= 2 for s in sets)   # 4 singletons + at most 6 pairs
    True
    """
    W = costs.W
    sets: list[tuple[int, ...]] = [(i,) for i in range(W)]
    times = [float(t) for t in costs.solo]

    def keep(s: tuple[int, ...], c: float) -> None:
        if math.isfinite(c) and c <= float(sum(costs.solo[x] for x in s)):
            sets.append(s)
            times.append(float(c))

    if concurrency >= 2:
        for i in range(W):
            for j in range(i + 1, W):
                keep((i, j), float(costs.corun[i, j]))
    if concurrency >= 3:
        if costs.triple is None:
            raise SolverError("concurrency 3 needs triple times")
        for t, c in sorted(costs.triple.items()):
            keep(t, float(c))
    return sets, np.array(times)


def _share_bound(sets: list[tuple[int, ...]], times: np.ndarray, W: int) -> float:
    """A bound without a solver: each job pays at least the cheapest per-job share of a set holding it."""
    share = np.full(W, np.inf)
    for s, c in zip(sets, times):
        for j in s:
            share[j] = min(share[j], c / len(s))
    return float(share.sum()) * (1 - 1e-12)   # float round-off of the sum, on the safe side


@known_options
def resolution_for(bound: float, W: int, total: float) -> float:
    """Seconds per integer unit: fine enough for :data:`milp.TOLERANCE`, coarse enough for int64.

    Rounding each chosen set's time down loses less than one unit per set, so
    a plan of at most ``W`` sets is off by less than ``W * resolution``; with
    ``resolution = 0.1 * TOLERANCE * bound / W`` that is a tenth of the
    tolerance of any plan (every plan costs at least ``bound``). ``total``
    (the sum of all set times) keeps the model's integers below 2**60.

    Examples
    --------
    >>> resolution_for(1e-5, 10, 1e-3) == 1e-13
    True
    >>> resolution_for(3e7, 10, 1e9) == 0.3
    True
    """
    fine = _ROUNDING_SHARE * TOLERANCE * bound / max(W, 1)
    return max(fine, total / _INT_BUDGET)


def _solve_cpsat(sets, times, W, deadline, workers, start, bound0, log):
    """Best (plan sets, bound) of a sequence of ever finer integer models within the deadline."""
    from ortools.sat.python import cp_model

    total = float(times.sum())
    res = resolution_for(bound0, W, total)
    info: dict[str, Any] = {"sets": len(sets), "resolutions": []}
    by_job: list[list[int]] = [[] for _ in range(W)]
    for k, s in enumerate(sets):
        for j in s:
            by_job[j].append(k)
    best, best_cost, lb = start, _cost(start, sets, times), bound0
    while not deadline.expired():
        m = cp_model.CpModel()
        x = [m.new_bool_var(f"x{k}") for k in range(len(sets))]
        for j in range(W):
            m.add_exactly_one(x[k] for k in by_job[j])
        cost = np.floor(times / res).astype(np.int64)
        m.minimize(sum(int(c) * v for c, v in zip(cost, x)))
        if best is not None:
            chosen = set(best)
            cpsat.set_hints(m, ((x[k], sets[k] in chosen) for k in range(len(sets))))
        out = cpsat.run(m, time_limit=deadline, workers=workers, log=log)
        info["resolutions"].append(res)
        info["cpsat_status"] = out.status
        if out.status == "INFEASIBLE":
            raise SolverError("CP-SAT found the set partitioning infeasible, but every job may run alone")
        if out.has_solution:
            # integer times are at most the true ones: units * res bounds every plan's true time
            lb = max(lb, out.bound * res * (1 - 1e-12))
            chosen = [sets[k] for k in range(len(sets)) if out.boolean(x[k])]
            c = _cost(chosen, sets, times)
            if best is None or c < best_cost:
                best, best_cost = chosen, c
        if best is not None and best_cost - lb <= TOLERANCE * best_cost:
            break
        if out.status != "OPTIMAL":
            break   # the limit, not the resolution, left the gap open
        finer = res * 1e-3
        if finer < total / _INT_BUDGET:
            break   # no finer model fits int64: report the gap
        res = finer
    info["resolution"] = res
    return best, lb, info


def _cost(chosen, sets, times) -> float:
    if chosen is None:
        return math.inf
    index = {s: k for k, s in enumerate(sets)}
    return float(sum(times[index[s]] for s in chosen))


def _solve_highs(sets, times, W, deadline, workers, start, bound0, log):
    if deadline.expired():
        return start, bound0, {"sets": len(sets), "termination": "time limit spent before the model was built"}
    import pyomo.environ as pyo

    t0 = time.perf_counter()
    scale = bound0
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(len(sets)), domain=pyo.Binary)
    by_job: list[list[int]] = [[] for _ in range(W)]
    for k, s in enumerate(sets):
        for j in s:
            by_job[j].append(k)
    m.cover = pyo.Constraint(range(W), rule=lambda m_, j: sum(m_.x[k] for k in by_job[j]) == 1)
    m.obj = pyo.Objective(expr=sum(float(times[k] / scale) * m.x[k] for k in range(len(sets))),
                          sense=pyo.minimize)
    if start is not None:
        chosen = set(start)
        for k, s in enumerate(sets):
            m.x[k].set_value(int(s in chosen))
    build = time.perf_counter() - t0
    info: dict[str, Any] = {"sets": len(sets), "scale": scale}
    # Handing the model to HiGHS costs about as long as building it, outside HiGHS's own clock.
    left = deadline.remaining()
    limit = None if left is None else left - build
    if limit is not None and limit <= 0:
        info["termination"] = "time limit spent building the model"
        return start, bound0, info
    out = solve_highs(m, limit, workers, warmstart=start is not None, log=log)
    info["termination"] = out.termination
    if out.infeasible:
        raise SolverError("HiGHS found the set partitioning infeasible, but every job may run alone")
    lb = bound0 if out.bound is None else max(bound0, out.bound * scale * (1 - _HIGHS_MARGIN))
    best = start
    if out.has_solution:
        chosen = [sets[k] for k in range(len(sets)) if pyo.value(m.x[k]) > 0.5]
        if _cost(chosen, sets, times) < _cost(start, sets, times):
            best = chosen
    return best, lb, info


def _concurrency(value: Any, problem: PairingProblem | WeightedQueue) -> int:
    if value is None:
        return problem.concurrency
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value not in (1, 2, 3):
        raise OptionError(f"must be 1, 2 or 3 or None, got {value!r}", field="concurrency")
    return int(value)


@opt.typed
def solve(problem: PairingProblem | WeightedQueue, *, backend: str = "cpsat",
          time_limit: float | None = None, workers: int | None = None,
          concurrency: int | None = None, hint: bool = True, costs: Costs | None = None,
          log: bool = False, **options: Any) -> Result:
    """Optimal job sets for a window (set partitioning over the family's set times).

    Parameters
    ----------
    problem
        :class:`instances.pairing.PairingProblem` (set times from the
        configuration search) or :class:`instances.pairing.WeightedQueue`.
    backend
        ``"cpsat"`` or ``"highs"``.
    time_limit
        Seconds for the whole call (cost search, warm start, model building
        and solves), ``None`` for no limit.
    workers
        Solver threads (CP-SAT: :data:`milp.cpsat.DEFAULT_WORKERS` by
        default; HiGHS: its own default).
    concurrency
        ``C`` (default: the problem's). ``C = 3`` enumerates all triples, so
        keep ``W`` small (tens of jobs).
    hint
        Start from Algorithm 1's plan (``C >= 2``; for ``C = 1`` the start is
        time sharing). Without it a time-limited solve may return UNKNOWN.
    costs
        Precomputed :class:`instances.pairing.Costs` of this problem (skips the search).
    log
        Stream the solver's log.

    Returns
    -------
    Result
        ``schedule`` is a checked :class:`instances.pairing.Plan`;
        ``objective`` its total time on the true set times;
        ``info["costs"]`` the set times used.

    Examples
    --------
    >>> from instances import pairing
    >>> p = pairing.PairingProblem(pairing.job_mix(2))
    >>> r = solve(p, backend="cpsat")
    >>> str(r.status), pairing.check(p, r.schedule)
    ('OPTIMAL', [])
    """
    opt.no_unknown(options, "milp.pairing.solve")
    backend = opt.choice(backend, BACKENDS, "backend")
    limit = opt.time_limit(time_limit)
    workers = opt.workers(workers)
    hint = opt.flag(hint, "hint")
    log = opt.flag(log, "log")
    C = _concurrency(concurrency, problem)
    if costs is not None and (not isinstance(costs, Costs) or tuple(costs.names) != tuple(
            problem.names if isinstance(problem, WeightedQueue) else (j.name for j in problem.jobs))):
        raise OptionError("must be the instances.pairing.Costs of this problem or None", field="costs")
    deadline = Deadline(limit)
    t0 = time.perf_counter()
    if costs is None:
        costs = costs_of(problem, triples=C >= 3)
    if C >= 3 and costs.triple is None:
        raise OptionError("concurrency 3 needs costs with triple times", field="costs")
    target = problem
    if isinstance(problem, PairingProblem) and problem.concurrency != C:
        target = PairingProblem(problem.jobs, problem.space, problem.model, C)
    if isinstance(problem, WeightedQueue) and problem.concurrency != C:
        target = WeightedQueue(problem.solo, problem.pair, problem.triple, C, problem.names)
    sets, times = candidate_sets(costs, C)
    bound0 = _share_bound(sets, times, costs.W)
    start = None
    if hint or C == 1:
        plan0 = algorithm1(problem, costs=costs) if C >= 2 else costs.plan([(i,) for i in range(costs.W)])
        start = _plan_sets(plan0, costs)
    info: dict[str, Any] = {"concurrency": C}
    if start is not None and _cost(start, sets, times) - bound0 <= TOLERANCE * _cost(start, sets, times):
        chosen, lb = start, bound0       # the warm start meets the trivial bound: nothing to solve
    elif backend == "cpsat":
        chosen, lb, more = _solve_cpsat(sets, times, costs.W, deadline, workers, start, bound0, log)
        info.update(more)
    else:
        chosen, lb, more = _solve_highs(sets, times, costs.W, deadline, workers, start, bound0, log)
        info.update(more)
    info["costs"] = costs
    runtime = time.perf_counter() - t0
    if chosen is None:
        return Result.from_bounds(None, lb, schedule=None, runtime=runtime, backend=backend, info=info)
    plan = costs.plan(chosen, policy=f"exact set partitioning ({backend}, C={C})")
    errs = check(target, plan)
    if errs:
        raise SolverError(f"{backend} returned a plan the checker rejects: {errs[:3]}")
    return Result.from_bounds(plan.total_time, lb, schedule=plan, runtime=time.perf_counter() - t0,
                              backend=backend, info=info)


def _plan_sets(plan: Plan, costs: Costs) -> list[tuple[int, ...]]:
    index = {n: i for i, n in enumerate(costs.names)}
    return [tuple(sorted(index[n] for n in s.jobs)) for s in plan.sets]
