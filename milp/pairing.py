"""Exact references for co-scheduling job sets (seed 003, Sec. 3.2), C = 2 and C = 3.

The problem of Sec. 3.2 with the hardware configuration of each job set
already optimised (Sec. 4.2) is a set partitioning problem: choose job sets
``S`` (singletons, pairs and, for ``C = 3``, triples) covering each job of the
window exactly once, minimising the sum of their times ``c_S``
(``SoloRunAppTime(P_total)`` for a singleton, the best ``CoRunTime`` for a
co-run). The set times come from the same vectorised configuration search as
Algorithm 1 (:func:`heuristics.pairing.search` / ``triple_costs``), so for
``C = 2`` the optimum must equal Edmonds' matching total.

Two backends of :func:`solve`, one model::

    min  sum_S c_S x_S   s.t.  sum_{S ni j} x_S = 1  for every job j,   x_S in {0, 1}

- ``"highs"``: Pyomo, solved by HiGHS (``appsi``) with a zero gap.
- ``"cpsat"``: OR-Tools CP-SAT, one Boolean per set, ``AddExactlyOne`` per
  job; times are integers of ``resolution`` seconds (default 1e-6). The
  plan's float total differs from the float optimum by at most ``W *
  resolution / 2``; the reported bound subtracts that much so it stays valid.

Co-run sets whose time exceeds their jobs' solo runs are split (Algorithm 1,
lines 19-31; it never costs time), and every plan passes
:func:`instances.pairing.check` before it is returned.

Examples
--------
>>> from instances import pairing
>>> from milp import solve_optimal
>>> q = pairing.WeightedQueue.random(8, seed=2)
>>> a = solve_optimal(q, backend="cpsat", time_limit=20)
>>> b = solve_optimal(q, backend="highs", time_limit=20)
>>> str(a.status), str(b.status), abs(a.objective - b.objective) < 1e-5
('OPTIMAL', 'OPTIMAL', True)
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from heuristics.pairing import Costs, costs_of, plan_from_sets
from instances.errors import OptionError, SolverError
from instances.pairing import PairingProblem, WeightedQueue, check
from milp.highs import solve_highs
from milp.result import Result, Status

__all__ = ["solve", "candidate_sets"]

RESOLUTION = 1e-6


def candidate_sets(costs: Costs, concurrency: int) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """Every allowed job set with a finite time, and those times.

    Examples
    --------
    >>> from instances import pairing
    >>> from heuristics.pairing import costs_of
    >>> sets, c = candidate_sets(costs_of(pairing.WeightedQueue.random(4, seed=0)), 2)
    >>> len(sets)   # 4 singletons + 6 pairs
    10
    """
    W = costs.W
    sets: list[tuple[int, ...]] = [(i,) for i in range(W)]
    times = [float(t) for t in costs.solo]
    if concurrency >= 2:
        for i in range(W):
            for j in range(i + 1, W):
                if math.isfinite(costs.corun[i, j]):
                    sets.append((i, j))
                    times.append(float(costs.corun[i, j]))
    if concurrency >= 3:
        if costs.triple is None:
            raise SolverError("concurrency 3 needs triple times")
        for t, c in sorted(costs.triple.items()):
            if math.isfinite(c):
                sets.append(t)
                times.append(float(c))
    return sets, np.array(times)


def _solve_cpsat(sets, times, W, time_limit, workers, hint, resolution):
    from ortools.sat.python import cp_model

    m = cp_model.CpModel()
    x = [m.NewBoolVar(f"x{k}") for k in range(len(sets))]
    by_job: list[list[int]] = [[] for _ in range(W)]
    for k, s in enumerate(sets):
        for j in s:
            by_job[j].append(k)
    for j in range(W):
        m.AddExactlyOne(x[k] for k in by_job[j])
    cost = np.rint(times / resolution).astype(np.int64)
    m.Minimize(sum(int(c) * v for c, v in zip(cost, x)))
    if hint is not None:
        chosen = set(hint)
        for k, s in enumerate(sets):
            m.AddHint(x[k], s in chosen)
    solver = cp_model.CpSolver()
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = float(time_limit)
    solver.parameters.num_workers = int(workers) if workers else 1
    st = solver.Solve(m)
    info: dict[str, Any] = {"resolution": resolution, "cpsat_status": solver.StatusName(st),
                            "sets": len(sets)}
    if st == cp_model.INFEASIBLE:
        return None, None, Status.INFEASIBLE, info
    if st not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None, None, Status.UNKNOWN, info
    chosen = [sets[k] for k in range(len(sets)) if solver.Value(x[k])]
    # Each chosen set's integer time is within resolution/2 of the true one.
    lb = solver.BestObjectiveBound() * resolution - W * resolution / 2
    status = Status.OPTIMAL if st == cp_model.OPTIMAL else Status.FEASIBLE
    return chosen, lb, status, info


def _solve_highs(sets, times, W, time_limit, workers, hint):
    import pyomo.environ as pyo

    m = pyo.ConcreteModel()
    m.S = pyo.RangeSet(0, len(sets) - 1)
    m.x = pyo.Var(m.S, domain=pyo.Binary)
    by_job: list[list[int]] = [[] for _ in range(W)]
    for k, s in enumerate(sets):
        for j in s:
            by_job[j].append(k)
    m.cover = pyo.Constraint(range(W), rule=lambda m_, j: sum(m_.x[k] for k in by_job[j]) == 1)
    m.obj = pyo.Objective(expr=sum(float(times[k]) * m.x[k] for k in range(len(sets))),
                          sense=pyo.minimize)
    if hint is not None:
        chosen = set(hint)
        for k, s in enumerate(sets):
            m.x[k].set_value(int(s in chosen))
    out = solve_highs(m, time_limit, int(workers) if workers else 1, warmstart=hint is not None)
    info: dict[str, Any] = {"termination": out.termination, "sets": len(sets)}
    if out.infeasible:
        return None, None, Status.INFEASIBLE, info
    lb = out.bound
    if not out.has_solution:  # none within the limit
        return None, lb, Status.UNKNOWN, info
    chosen = [sets[k] for k in range(len(sets)) if pyo.value(m.x[k]) > 0.5]
    # HiGHS's feasibility tolerance: keep the bound on the safe side.
    if lb is not None:
        lb -= 1e-9 * max(1.0, abs(lb))
    status = Status.OPTIMAL if out.optimal else Status.FEASIBLE
    return chosen, lb, status, info


def solve(problem: PairingProblem | WeightedQueue, backend: str = "cpsat",
          time_limit: float | None = None, workers: int | None = None,
          concurrency: int | None = None, hint: bool = True, costs: Costs | None = None,
          resolution: float = RESOLUTION, **options: Any) -> Result:
    """Optimal job sets for a window (set partitioning over the searched set times).

    Parameters
    ----------
    problem
        :class:`instances.pairing.PairingProblem` (set times from the
        configuration search) or :class:`instances.pairing.WeightedQueue`.
    backend
        ``"cpsat"`` or ``"highs"``.
    time_limit, workers
        Solver limits (seconds, threads; one thread by default).
    concurrency
        ``C`` (default: the problem's). ``C = 3`` enumerates all triples, so
        keep ``W`` small (tens of jobs).
    hint
        Start from Algorithm 1's plan.
    costs
        Precomputed :class:`heuristics.pairing.Costs` (skips the search).

    Returns
    -------
    Result
        ``schedule`` is a checked :class:`instances.pairing.Plan`;
        ``objective`` its total time; ``info["costs"]`` the set times used.

    Examples
    --------
    >>> from instances import pairing
    >>> p = pairing.PairingProblem(pairing.job_mix(2))
    >>> r = solve(p, backend="cpsat")
    >>> str(r.status), pairing.check(p, r.schedule)
    ('OPTIMAL', [])
    """
    if options:
        raise TypeError(f"unknown option(s) for the pairing models: {', '.join(options)}")
    C = problem.concurrency if concurrency is None else int(concurrency)
    if C not in (1, 2, 3):
        raise OptionError(f"concurrency must be 1, 2 or 3, got {C!r}")
    t0 = time.perf_counter()
    if costs is None:
        costs = costs_of(problem, triples=C >= 3)
    sets, times = candidate_sets(costs, C)
    hint_sets = None
    if hint and C >= 2:
        from heuristics.pairing import algorithm1
        start = algorithm1(problem, costs=costs)
        index = {n: i for i, n in enumerate(costs.names)}
        hint_sets = [tuple(sorted(index[n] for n in s.jobs)) for s in start.sets]
    if backend == "cpsat":
        chosen, lb, status, info = _solve_cpsat(sets, times, costs.W, time_limit, workers,
                                                hint_sets, resolution)
    elif backend == "highs":
        chosen, lb, status, info = _solve_highs(sets, times, costs.W, time_limit, workers,
                                                hint_sets)
    else:
        raise OptionError(f"unknown backend {backend!r}; use 'cpsat' or 'highs'")
    runtime = time.perf_counter() - t0
    info["costs"] = costs
    if chosen is None:
        return Result(None, lb, status, runtime, None, backend, info)
    plan = plan_from_sets(costs, chosen, policy=f"exact set partitioning ({backend}, C={C})")
    target = problem
    if isinstance(problem, PairingProblem) and problem.concurrency != C:
        target = PairingProblem(problem.jobs, problem.space, problem.model, C)
    if isinstance(problem, WeightedQueue) and problem.concurrency != C:
        target = WeightedQueue(problem.solo, problem.pair, problem.triple, C, problem.names)
    errs = check(target, plan)
    if errs:
        raise SolverError(f"{backend} returned a plan the checker rejects: {errs[:3]}")
    obj = plan.total_time
    if lb is not None:
        lb = min(lb, obj)
    return Result(obj, lb, status, runtime, plan, backend, info)
