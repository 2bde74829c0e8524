"""Exact minimum-SM partitioning for small real-time task sets (seed 004).

Problem: choose disjoint partitions (sizes ``m_p``) and allocate every task to
one, with the conflict rule of Sec. 4.2, so that every partition is
EDF-schedulable; minimise the total number of SMs ``sum m_p`` (subject to
``sum m_p <= M`` when ``capacity=True``, the default; then INFEASIBLE means the
task set cannot be partitioned on the GPU under the chosen test).

Backends
--------
``"cpsat"`` (OR-Tools CP-SAT) and ``"highs"`` (Pyomo + HiGHS) model the
**density test** ``sum_i C_i / D_i <= 1`` per partition, which is linear in
the allocation once multiplied by ``m_p``:

    C_i = a^n_i/m + b^n_i + c_i ((a^c_i - a^n_i)/m + (b^c_i - b^n_i))
    sum_i C_i/D_i <= 1  <=>  sum_i [x_ip a^n_i + z_ip b^n_i + c_ip (a^c_i-a^n_i)
                                     + w_ip (b^c_i-b^n_i)] / D_i <= m_p

with ``x_ip`` (task ``i`` in partition ``p``), ``c_ip`` (``i`` in ``p`` and in
conflict: ``c_ip >= x_ip + x_jp - 1`` for every other task ``j`` of its type,
exact because conflicts only add load), ``z_ip = x_ip m_p`` and
``w_ip = c_ip m_p`` (enforced as ``>= m_p`` when the binary is 1, again exact
since they only add load). Partition ``p`` is labelled by its lowest-index
task (``x_ip = 0`` for ``i < p``, ``x_ip <= x_pp``), which removes the
symmetry of partition labels. Lemma 2 gives the cut ``m_p >= L2_i x_ip``.

CP-SAT needs integer coefficients: they are scaled by ``10**6`` and rounded
*down* (a relaxation, so its optimum is a valid lower bound); the solution is
then checked with the float data. If it fails that check (density within
``~1e-6`` of 1), the model is re-solved with coefficients rounded *up*
(conservative, always feasible) and the status is OPTIMAL only if both agree.

``"enumerate"`` is an exact reference for **either** test, including the exact
EDF demand test, which is not linear in the size: a dynamic programme over
subsets, ``f(S) = min_{B subset S, min(S) in B} minsize(B) + f(S \\ B)``, with
``minsize(B)`` the smallest schedulable size (bisection; schedulability is
monotone in ``m`` and in the task set). ``O(3^n)``; use ``n <= 12``.

Every returned solution is passed through ``instances.realtime.check``.

Examples
--------
>>> from instances import realtime as rt
>>> from milp import solve_optimal
>>> p = rt.generate(n=6, utilization=4, sms=68, seed=0)
>>> a = solve_optimal(p, backend="cpsat", time_limit=20)
>>> b = solve_optimal(p, backend="enumerate", test="density")
>>> str(a.status), a.objective == b.objective
('OPTIMAL', True)
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

from instances import realtime as rt
from instances.errors import OptionError, SolverError
from milp.highs import solve_highs
from milp.result import Result, Status

__all__ = ["solve", "model_data"]

SCALE = 10**6
MAX_ENUMERATE = 14


def model_data(problem: rt.RealtimeProblem) -> dict[str, Any]:
    """Per-task density coefficients of the linear model (see module docstring)."""
    a = problem.arrays
    D = a["D"]
    l2 = [rt.lemma2_min_size(problem, i) for i in range(problem.n)]
    return {
        "alpha": a["an"] / D, "beta": a["bn"] / D,
        "gamma": (a["ac"] - a["an"]) / D, "delta": (a["bc"] - a["bn"]) / D,
        "mem": a["mem"], "l2": l2,
    }


def _solution_from(assign: dict[int, list[int]], sizes: dict[int, int]) -> rt.Solution:
    parts = [rt.Partition(int(sizes[p]), tuple(sorted(ts))) for p, ts in sorted(assign.items()) if ts]
    return rt.Solution(tuple(parts))


def _density_ok(problem: rt.RealtimeProblem, sol: rt.Solution) -> bool:
    return all(rt.schedulable(problem, p.tasks, p.size, "density") for p in sol.partitions)


def _checked(problem: rt.RealtimeProblem, sol: rt.Solution, test: str, capacity: bool) -> rt.Solution:
    target = problem if capacity else dataclasses.replace(problem, sms=max(problem.sms, sol.total_sms))
    errors = rt.check(target, sol, test="density" if test == "density" else "edf")
    if errors:
        raise SolverError(f"realtime exact model returned an infeasible solution: {errors[0]}")
    return sol


# --------------------------------------------------------------------------- CP-SAT


def _cpsat(problem, data, rounding, time_limit, workers, capacity):
    from ortools.sat.python import cp_model

    n, M = problem.n, problem.sms
    rnd = math.floor if rounding == "down" else math.ceil
    coef = {k: [int(rnd(SCALE * v)) for v in data[k]] for k in ("alpha", "beta", "gamma", "delta")}
    mdl = cp_model.CpModel()
    x = {(i, p): mdl.NewBoolVar(f"x{i}_{p}") for p in range(n) for i in range(p, n)}
    c = {(i, p): mdl.NewBoolVar(f"c{i}_{p}") for p in range(n) for i in range(p, n)}
    m = [mdl.NewIntVar(0, M, f"m{p}") for p in range(n)]
    for i in range(n):
        mdl.AddExactlyOne(x[i, p] for p in range(i + 1))
    for p in range(n):
        mdl.Add(m[p] >= 1).OnlyEnforceIf(x[p, p])
        mdl.Add(m[p] == 0).OnlyEnforceIf(x[p, p].Not())
        terms = []
        for i in range(p, n):
            if i > p:
                mdl.AddImplication(x[i, p], x[p, p])
            mdl.Add(m[p] >= data["l2"][i]).OnlyEnforceIf(x[i, p])
            mdl.AddImplication(c[i, p], x[i, p])
            for j in range(p, n):
                if j != i and data["mem"][j] == data["mem"][i]:
                    mdl.AddBoolOr([c[i, p], x[i, p].Not(), x[j, p].Not()])
            z = mdl.NewIntVar(0, M, f"z{i}_{p}")
            w = mdl.NewIntVar(0, M, f"w{i}_{p}")
            mdl.Add(z >= m[p]).OnlyEnforceIf(x[i, p])
            mdl.Add(w >= m[p]).OnlyEnforceIf(c[i, p])
            terms += [coef["alpha"][i] * x[i, p], coef["beta"][i] * z,
                      coef["gamma"][i] * c[i, p], coef["delta"][i] * w]
        mdl.Add(sum(terms) <= SCALE * m[p])
    if capacity:
        mdl.Add(sum(m) <= M)
    mdl.Minimize(sum(m))
    solver = cp_model.CpSolver()
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = float(time_limit)
    solver.parameters.num_workers = int(workers) if workers else 1
    st = solver.Solve(mdl)
    sol = None
    if st in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        assign = {p: [i for i in range(p, n) if solver.Value(x[i, p])] for p in range(n)}
        sizes = {p: solver.Value(m[p]) for p in range(n)}
        sol = _solution_from(assign, sizes)
    name = {cp_model.OPTIMAL: "OPTIMAL", cp_model.FEASIBLE: "FEASIBLE",
            cp_model.INFEASIBLE: "INFEASIBLE"}.get(st, "UNKNOWN")
    bound = solver.BestObjectiveBound() if name in ("OPTIMAL", "FEASIBLE") else None
    return name, sol, bound


def _density_data(problem, test, backend):
    """:func:`model_data` for the density models; ``None`` when Lemma 2 already rules a task out."""
    if test != "density":
        raise OptionError(f"backend {backend!r} models the density test; use backend='enumerate' "
                          "for test='demand'")
    data = model_data(problem)
    return None if any(v is None for v in data["l2"]) else data


def _solve_cpsat(problem, test, time_limit, workers, capacity):
    data = _density_data(problem, test, "cpsat")
    if data is None:
        return Status.INFEASIBLE, None, None, {"reason": "lemma2"}
    st, sol, bound = _cpsat(problem, data, "down", time_limit, workers, capacity)
    info: dict[str, Any] = {"scale": SCALE, "relaxed_status": st}
    if st == "INFEASIBLE":
        return Status.INFEASIBLE, None, None, info
    lb = math.ceil(bound - 1e-9) if bound is not None else None
    if sol is not None and _density_ok(problem, sol):
        status = Status.OPTIMAL if st == "OPTIMAL" else Status.FEASIBLE
        return status, sol, lb, info
    # Rounding down admitted a partition with density just above 1: re-solve conservatively.
    st2, sol2, _ = _cpsat(problem, data, "up", time_limit, workers, capacity)
    info["conservative_status"] = st2
    if sol2 is None or not _density_ok(problem, sol2):
        return Status.UNKNOWN, None, lb, info
    status = Status.OPTIMAL if (lb is not None and sol2.total_sms <= lb and st == "OPTIMAL") \
        else Status.FEASIBLE
    return status, sol2, lb, info


# --------------------------------------------------------------------------- Pyomo + HiGHS


def _solve_highs(problem, test, time_limit, workers, capacity):
    import pyomo.environ as pyo

    data = _density_data(problem, test, "highs")
    if data is None:
        return Status.INFEASIBLE, None, None, {"reason": "lemma2"}
    n, M = problem.n, problem.sms
    idx = [(i, p) for p in range(n) for i in range(p, n)]
    mdl = pyo.ConcreteModel()
    mdl.x = pyo.Var(idx, domain=pyo.Binary)
    mdl.c = pyo.Var(idx, domain=pyo.Binary)
    mdl.z = pyo.Var(idx, bounds=(0, M))
    mdl.w = pyo.Var(idx, bounds=(0, M))
    mdl.m = pyo.Var(range(n), domain=pyo.NonNegativeIntegers, bounds=(0, M))
    cons = mdl.cons = pyo.ConstraintList()
    for i in range(n):
        cons.add(sum(mdl.x[i, p] for p in range(i + 1)) == 1)
    for p in range(n):
        cons.add(mdl.m[p] >= mdl.x[p, p])
        cons.add(mdl.m[p] <= M * mdl.x[p, p])
        for i in range(p, n):
            if i > p:
                cons.add(mdl.x[i, p] <= mdl.x[p, p])
            cons.add(mdl.m[p] >= data["l2"][i] * mdl.x[i, p])
            cons.add(mdl.c[i, p] <= mdl.x[i, p])
            for j in range(p, n):
                if j != i and data["mem"][j] == data["mem"][i]:
                    cons.add(mdl.c[i, p] >= mdl.x[i, p] + mdl.x[j, p] - 1)
            cons.add(mdl.z[i, p] >= mdl.m[p] - M * (1 - mdl.x[i, p]))
            cons.add(mdl.w[i, p] >= mdl.m[p] - M * (1 - mdl.c[i, p]))
        cons.add(sum(float(data["alpha"][i]) * mdl.x[i, p] + float(data["beta"][i]) * mdl.z[i, p]
                     + float(data["gamma"][i]) * mdl.c[i, p] + float(data["delta"][i]) * mdl.w[i, p]
                     for i in range(p, n)) <= mdl.m[p])
    if capacity:
        cons.add(sum(mdl.m[p] for p in range(n)) <= M)
    mdl.obj = pyo.Objective(expr=sum(mdl.m[p] for p in range(n)), sense=pyo.minimize)
    out = solve_highs(mdl, time_limit, int(workers) if workers else None)
    info: dict[str, Any] = {"termination": out.termination}
    if out.infeasible:
        return Status.INFEASIBLE, None, None, info
    # the objective counts SMs: a bound rounds up to the next integer
    lb = None if out.bound is None else math.ceil(out.bound - 1e-6)
    if not out.has_solution:  # none within the limit
        return Status.UNKNOWN, None, lb, info
    assign = {p: [i for i in range(p, n) if pyo.value(mdl.x[i, p]) > 0.5] for p in range(n)}
    sizes = {p: int(round(pyo.value(mdl.m[p]))) for p in range(n)}
    sol = _solution_from(assign, sizes)
    optimal = out.optimal
    if not _density_ok(problem, sol):
        # HiGHS accepted a density within its feasibility tolerance of 1: add one SM.
        parts = tuple(p if rt.schedulable(problem, p.tasks, p.size, "density")
                      else rt.Partition(p.size + 1, p.tasks) for p in sol.partitions)
        sol = rt.Solution(parts)
        optimal = False
        info["repaired"] = True
        if not _density_ok(problem, sol) or (capacity and sol.total_sms > M):
            return Status.UNKNOWN, None, lb, info
    return (Status.OPTIMAL if optimal else Status.FEASIBLE), sol, lb, info


# --------------------------------------------------------------------------- enumeration


def min_size(problem: rt.RealtimeProblem, tasks: list[int], test: str,
             lo: int = 1) -> int | None:
    """Smallest partition size on which ``tasks`` are schedulable (``None`` if > M)."""
    hi = problem.sms
    if not rt.schedulable(problem, tasks, hi, test):
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        if rt.schedulable(problem, tasks, mid, test):
            hi = mid
        else:
            lo = mid + 1
    return hi


def _solve_enumerate(problem, test, time_limit, capacity):
    n = problem.n
    if n > MAX_ENUMERATE:
        raise OptionError(f"backend 'enumerate' is for n <= {MAX_ENUMERATE} tasks, got {n}")
    t0 = time.perf_counter()
    l2 = [rt.lemma2_min_size(problem, i) for i in range(n)]
    if any(v is None for v in l2):
        return Status.INFEASIBLE, None, None, {"reason": "lemma2"}
    size: dict[int, int | None] = {}
    for mask in range(1, 1 << n):
        members = [i for i in range(n) if mask >> i & 1]
        # Monotone in the task set: a superset of an unschedulable set is unschedulable,
        # and needs at least as many SMs as each of its subsets.
        low = 1
        dead = False
        for i in members:
            sub = size[mask & ~(1 << i)] if mask & ~(1 << i) else l2[i]
            if sub is None:
                dead = True
                break
            low = max(low, sub)
        size[mask] = None if dead else min_size(problem, members, test, low)
        if time_limit is not None and time.perf_counter() - t0 > time_limit:
            return Status.UNKNOWN, None, None, {"reason": "time limit"}
    INF = math.inf
    best = [INF] * (1 << n)
    choice = [0] * (1 << n)
    best[0] = 0
    for S in range(1, 1 << n):
        low = S & -S
        rest = S ^ low
        sub = rest
        while True:
            B = sub | low
            s = size[B]
            if s is not None and s + best[S ^ B] < best[S]:
                best[S] = s + best[S ^ B]
                choice[S] = B
            if sub == 0:
                break
            sub = (sub - 1) & rest
    full = (1 << n) - 1
    if best[full] == INF or (capacity and best[full] > problem.sms):
        return Status.INFEASIBLE, None, None, {"min_total": best[full]}
    parts = []
    S = full
    while S:
        B = choice[S]
        parts.append(rt.Partition(int(size[B]), tuple(i for i in range(n) if B >> i & 1)))
        S ^= B
    return Status.OPTIMAL, rt.Solution(tuple(parts)), int(best[full]), {"subsets": 1 << n}


# --------------------------------------------------------------------------- entry point


def solve(problem: rt.RealtimeProblem, backend: str = "cpsat", time_limit: float | None = None,
          workers: int | None = None, test: str = "density", capacity: bool = True,
          **options: Any) -> Result:
    """Minimum total SMs of a schedulable partitioning (see module docstring).

    Parameters
    ----------
    problem
        A :class:`instances.realtime.RealtimeProblem`.
    backend
        ``"cpsat"``, ``"highs"`` (density test) or ``"enumerate"`` (density or demand test).
    time_limit, workers
        Solver limits (seconds, threads).
    test
        ``"density"`` (default) or ``"demand"`` (``backend="enumerate"`` only).
    capacity
        Require ``sum m_p <= M``; without it the minimum may exceed ``M``.

    Returns
    -------
    Result
        ``objective`` = total SMs, ``schedule`` = :class:`instances.realtime.Solution`.

    Examples
    --------
    >>> from instances import realtime as rt
    >>> r = solve(rt.generate(n=5, utilization=3, seed=1), backend="enumerate", test="demand")
    >>> str(r.status), r.objective == r.schedule.total_sms
    ('OPTIMAL', True)
    """
    if options:
        raise TypeError(f"unknown options for the realtime model: {sorted(options)}")
    if not isinstance(problem, rt.RealtimeProblem):
        raise TypeError("solve expects an instances.realtime.RealtimeProblem")
    if test not in rt.TESTS:
        raise ValueError(f"unknown schedulability test {test!r}; use one of {rt.TESTS}")
    t0 = time.perf_counter()
    if backend == "cpsat":
        status, sol, lb, info = _solve_cpsat(problem, test, time_limit, workers, capacity)
    elif backend == "highs":
        status, sol, lb, info = _solve_highs(problem, test, time_limit, workers, capacity)
    elif backend == "enumerate":
        status, sol, lb, info = _solve_enumerate(problem, test, time_limit, capacity)
    else:
        raise ValueError(f"unknown backend {backend!r}; use 'cpsat', 'highs' or 'enumerate'")
    info["test"] = test
    if sol is not None:
        sol = _checked(problem, sol, test, capacity)
        if lb is not None and lb > sol.total_sms:
            lb = sol.total_sms
    objective = None if sol is None else float(sol.total_sms)
    return Result(objective, None if lb is None else float(lb), status,
                  time.perf_counter() - t0, sol, backend, info)
