"""Exact minimum-SM partitioning for small real-time task sets (real-time partitioning paper).

Problem (real-time partitioning paper, Sec. 4): choose disjoint partitions
(sizes ``m_p``) and allocate every task to one, with the conflict rule of
Sec. 4.2, so that every partition is EDF-schedulable; minimise the total
number of SMs ``sum m_p`` (subject to ``sum m_p <= M`` when ``capacity=True``,
the default; then INFEASIBLE means the task set cannot be partitioned on the
GPU under the chosen test). Every partition has at most ``M`` SMs.

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

CP-SAT needs integers: the coefficients are scaled by ``scale`` and rounded
*down*, with the right-hand side widened by the checker's relative tolerance
(a relaxation, so its optimum is a valid lower bound), and *up* (a
restriction, whose solutions pass the float check). A relaxed solution that
passes the check is kept; otherwise the restriction is solved. When they
disagree the pair is solved again with a 1000 times finer scale, while the
time limit and int64 allow, else the result is FEASIBLE with its true gap.
The densities are ratios of times, so the scale does not depend on the unit
of time; it matters for tasks whose density terms are far below 1e-6.

``"enumerate"`` is an exact reference for **either** test, including the exact
EDF demand test, which is not linear in the size: a dynamic programme over
subsets, ``f(S) = min_{B subset S, min(S) in B} minsize(B) + f(S \\ B)``, with
``minsize(B)`` the smallest schedulable size (bisection; schedulability is
monotone in ``m`` and in the task set). ``O(3^n)``; use ``n <= 12``.

Every backend starts from the SMS heuristic (Algorithm 1 with Definition 3,
merging until no merge is valid), so a time-limited solve returns at least
its partitioning, FEASIBLE, with a valid bound. Every returned solution is
passed through :func:`instances.realtime.check`.

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

from heuristics.realtime import MAX_TASKS as MAX_HEURISTIC_TASKS
from heuristics.realtime import partition_and_allocate
from instances import options as opt
from instances import realtime as rt
from instances.errors import OptionError, SolverError
from instances.options import Deadline, known_options
from milp import cpsat
from milp.highs import solve_highs
from milp.result import Result

__all__ = ["solve", "model_data", "min_size", "BACKENDS", "SCALES"]

BACKENDS = ("cpsat", "highs", "enumerate")
#: Coefficient scales CP-SAT tries, coarse to fine (a finer one only when the previous left a gap).
SCALES = (10**6, 10**9, 10**12)
MAX_ENUMERATE = 14
#: Relative tolerance of the schedulability tests in instances.realtime (density <= 1 + REL passes).
REL = 1e-9
#: CP-SAT rejects a model whose linear expressions may overflow int64.
_INT_BUDGET = 2**60
#: Seconds of Pyomo-to-HiGHS hand-over per second of Pyomo model building (measured, with margin).
_HANDOVER = 2.5


@known_options
def model_data(problem: rt.RealtimeProblem) -> dict[str, Any]:
    """Per-task density coefficients of the linear model (see module docstring).

    Examples
    --------
    >>> t = rt.Task("k", 100, 50, "compute", a_n=10, b_n=1, a_c=12, b_c=1.2)
    >>> d = model_data(rt.RealtimeProblem((t,), sms=4))
    >>> float(d["alpha"][0]), float(d["beta"][0]), d["l2"]
    (0.2, 0.02, [1])
    """
    a = problem.arrays
    D = a["D"]
    l2 = [rt.lemma2_min_size(problem, i) for i in range(problem.n)]
    return {
        "alpha": a["an"] / D, "beta": a["bn"] / D,
        "gamma": (a["ac"] - a["an"]) / D, "delta": (a["bc"] - a["bn"]) / D,
        "mem": a["mem"], "l2": l2,
    }


def _target(problem: rt.RealtimeProblem, sol: rt.Solution, capacity: bool) -> rt.RealtimeProblem:
    return problem if capacity else dataclasses.replace(problem, sms=max(problem.sms, sol.total_sms))


def _feasible(problem: rt.RealtimeProblem, sol: rt.Solution | None, test: str, capacity: bool) -> bool:
    if sol is None or (capacity and sol.total_sms > problem.sms):
        return False
    return all(rt.schedulable(problem, p.tasks, p.size, test) for p in sol.partitions)


def _trivial_bound(problem: rt.RealtimeProblem, l2: list[int], test: str) -> int:
    """``max_i L2_i`` and the load bound: a partition of ``m`` SMs carries at most ``m (1 + REL)``
    of ``sum a^n_i / X_i`` (``X = D`` for the density test, ``T`` for the demand test)."""
    a = problem.arrays
    load = float((a["an"] / (a["D"] if test == "density" else a["T"])).sum())
    return max(max(l2), math.ceil(load / (1 + REL) * (1 - 1e-12)))


def _warm_start(problem, test, capacity):
    """The SMS heuristic (Definition 3, merging until no merge is valid), if it is feasible (none above the
    heuristic's :data:`~heuristics.realtime.MAX_TASKS`)."""
    if problem.n > MAX_HEURISTIC_TASKS:
        return None
    res = partition_and_allocate(problem, "sms", False, test, target=0)
    return res.solution if _feasible(problem, res.solution, test, capacity) else None


# --------------------------------------------------------------------------- CP-SAT


class _CpsatModel:
    """The density model with coefficients scaled by ``scale``, rounded down (relaxed) or up."""

    def __init__(self, problem, data, scale: int, up: bool, capacity: bool) -> None:
        from ortools.sat.python import cp_model

        n, M = problem.n, problem.sms
        rnd = math.ceil if up else math.floor
        coef = {k: [int(rnd(scale * float(v))) for v in data[k]] for k in ("alpha", "beta", "gamma", "delta")}
        # relaxed: the checker accepts density up to 1 + REL; restricted: density <= 1 exactly
        rhs = scale if up else scale + math.ceil(scale * REL)
        mdl = self.model = cp_model.CpModel()
        self.n = n
        x = self.x = {(i, p): mdl.new_bool_var(f"x{i}_{p}") for p in range(n) for i in range(p, n)}
        c = self.c = {(i, p): mdl.new_bool_var(f"c{i}_{p}") for p in range(n) for i in range(p, n)}
        m = self.m = [mdl.new_int_var(0, M, f"m{p}") for p in range(n)]
        self.z, self.w = {}, {}
        for i in range(n):
            mdl.add_exactly_one(x[i, p] for p in range(i + 1))
        for p in range(n):
            mdl.add(m[p] >= 1).only_enforce_if(x[p, p])
            mdl.add(m[p] == 0).only_enforce_if(~x[p, p])
            terms = []
            for i in range(p, n):
                if i > p:
                    mdl.add_implication(x[i, p], x[p, p])
                mdl.add(m[p] >= data["l2"][i]).only_enforce_if(x[i, p])
                mdl.add_implication(c[i, p], x[i, p])
                for j in range(p, n):
                    if j != i and data["mem"][j] == data["mem"][i]:
                        mdl.add_bool_or([c[i, p], ~x[i, p], ~x[j, p]])
                z = self.z[i, p] = mdl.new_int_var(0, M, f"z{i}_{p}")
                w = self.w[i, p] = mdl.new_int_var(0, M, f"w{i}_{p}")
                mdl.add(z >= m[p]).only_enforce_if(x[i, p])
                mdl.add(w >= m[p]).only_enforce_if(c[i, p])
                terms += [coef["alpha"][i] * x[i, p], coef["beta"][i] * z,
                          coef["gamma"][i] * c[i, p], coef["delta"][i] * w]
            mdl.add(sum(terms) <= rhs * m[p])
        if capacity:
            mdl.add(sum(m) <= M)
        mdl.minimize(sum(m))

    def hint(self, sol: rt.Solution, problem: rt.RealtimeProblem) -> None:
        where = {}
        for part in sol.partitions:
            label = min(part.tasks)
            conf = rt.in_conflict(problem.arrays["mem"][list(part.tasks)])
            for i, cf in zip(part.tasks, conf):
                where[i] = (label, part.size, bool(cf))
        values = []
        for (i, p), var in self.x.items():
            lab, size, cf = where[i]
            on = lab == p
            values += [(var, on), (self.c[i, p], on and cf), (self.z[i, p], size if on else 0),
                       (self.w[i, p], size if on and cf else 0)]
        sizes = {lab: size for lab, size, _ in where.values()}
        values += [(self.m[p], sizes.get(p, 0)) for p in range(self.n)]
        cpsat.set_hints(self.model, values)

    def solution(self, out: cpsat.CpsatRun) -> rt.Solution:
        parts = []
        for p in range(self.n):
            tasks = tuple(i for i in range(p, self.n) if out.boolean(self.x[i, p]))
            if tasks:
                parts.append(rt.Partition(int(out.value(self.m[p])), tasks))
        return rt.Solution(tuple(parts))


def _max_scale(problem, data) -> int:
    """The largest scale whose model cannot overflow int64."""
    M = problem.sms
    weight = sum(float(data["alpha"][i] + data["gamma"][i]) + M * float(data["beta"][i] + data["delta"][i])
                 for i in range(problem.n)) + 2 * M
    return int(_INT_BUDGET / max(weight, 1.0))


def _solve_cpsat(problem, data, deadline, workers, capacity, best, lb, log):
    info: dict[str, Any] = {"scales": []}
    top = _max_scale(problem, data)
    for scale in SCALES:
        if scale > top or deadline.expired():
            break
        info["scales"].append(scale)
        relaxed = _CpsatModel(problem, data, scale, False, capacity)
        if best is not None:
            relaxed.hint(best, problem)
        out = cpsat.run(relaxed.model, time_limit=deadline, workers=workers, log=log)
        info["relaxed_status"] = out.status
        if out.status == "INFEASIBLE":
            return None, None, True, info      # a relaxation without solutions: none exists
        if out.has_solution:
            lb = max(lb, math.ceil(out.bound - 1e-9))
            sol = relaxed.solution(out)
            if _feasible(problem, sol, "density", capacity) and (best is None or sol.total_sms < best.total_sms):
                best = sol
        if best is not None and best.total_sms <= lb:
            break
        if deadline.expired():
            break
        strict = _CpsatModel(problem, data, scale, True, capacity)
        if best is not None:
            strict.hint(best, problem)
        out2 = cpsat.run(strict.model, time_limit=deadline, workers=workers, log=log)
        info["restricted_status"] = out2.status
        if out2.has_solution:
            sol = strict.solution(out2)
            if _feasible(problem, sol, "density", capacity) and (best is None or sol.total_sms < best.total_sms):
                best = sol
        if best is not None and best.total_sms <= lb:
            break
        if out.status != "OPTIMAL":
            break   # the time limit, not the rounding, left the gap open
    return best, lb, False, info


# --------------------------------------------------------------------------- Pyomo + HiGHS


def _solve_highs(problem, data, deadline, workers, capacity, best, lb, log):
    if deadline.expired():
        return best, lb, False, {"termination": "time limit spent before the model was built"}
    import pyomo.environ as pyo

    t0 = time.perf_counter()
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
    info: dict[str, Any] = {}
    if best is not None:
        for (i, p) in idx:
            mdl.x[i, p].set_value(0)
            mdl.c[i, p].set_value(0)
            mdl.z[i, p].set_value(0)
            mdl.w[i, p].set_value(0)
        for p in range(n):
            mdl.m[p].set_value(0)
        for part in best.partitions:
            lab = min(part.tasks)
            conf = rt.in_conflict(problem.arrays["mem"][list(part.tasks)])
            mdl.m[lab].set_value(part.size)
            for i, cf in zip(part.tasks, conf):
                mdl.x[i, lab].set_value(1)
                mdl.z[i, lab].set_value(part.size)
                if cf:
                    mdl.c[i, lab].set_value(1)
                    mdl.w[i, lab].set_value(part.size)
    build = time.perf_counter() - t0
    left = deadline.remaining()
    # Handing the model to HiGHS happens outside HiGHS's own clock and costs about twice as
    # long as building it (measured for n = 14..30); keep that time out of the solver's limit.
    limit = None if left is None else left - _HANDOVER * build
    if limit is not None and limit <= 0:
        info["termination"] = "time limit spent building the model"
        return best, lb, False, info
    out = solve_highs(mdl, limit, workers, warmstart=best is not None, log=log)
    info["termination"] = out.termination
    if out.infeasible:
        return None, None, True, info
    if out.bound is not None:
        # the objective counts SMs: a bound rounds up to the next integer
        lb = max(lb, math.ceil(out.bound - 1e-6))
    if out.has_solution:
        assign = {p: [i for i in range(p, n) if pyo.value(mdl.x[i, p]) > 0.5] for p in range(n)}
        parts = tuple(rt.Partition(int(round(pyo.value(mdl.m[p]))), tuple(ts)) for p, ts in assign.items() if ts)
        # HiGHS may accept a density within its feasibility tolerance above 1: add an SM there
        parts = tuple(q if rt.schedulable(problem, q.tasks, q.size, "density")
                      else rt.Partition(q.size + 1, q.tasks) for q in parts)
        sol = rt.Solution(parts)
        if _feasible(problem, sol, "density", capacity) and (best is None or sol.total_sms < best.total_sms):
            best = sol
    return best, lb, False, info


# --------------------------------------------------------------------------- enumeration


@known_options
def min_size(problem: rt.RealtimeProblem, tasks: list[int], test: str,
             lo: int = 1) -> int | None:
    """Smallest partition size on which ``tasks`` are schedulable (``None`` if > M).

    Examples
    --------
    >>> t = rt.Task("k", 100, 75, "compute", a_n=300, b_n=6, a_c=360, b_c=7.2)
    >>> min_size(rt.RealtimeProblem((t,), sms=68), [0], "demand")
    5
    """
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


def _solve_enumerate(problem, test, deadline, capacity, l2, best, lb):
    n = problem.n
    info: dict[str, Any] = {"subsets": 1 << n}
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
        if deadline.expired():
            info["stopped"] = "time limit while sizing subsets"
            return best, lb, False, info
    INF = math.inf
    total = [INF] * (1 << n)
    choice = [0] * (1 << n)
    total[0] = 0
    for S in range(1, 1 << n):
        if S & 1023 == 0 and deadline.expired():
            info["stopped"] = "time limit in the partition recursion"
            return best, lb, False, info
        low = S & -S
        rest = S ^ low
        sub = rest
        while True:
            B = sub | low
            s = size[B]
            if s is not None and s + total[S ^ B] < total[S]:
                total[S] = s + total[S ^ B]
                choice[S] = B
            if sub == 0:
                break
            sub = (sub - 1) & rest
    full = (1 << n) - 1
    info["min_total"] = total[full]
    if total[full] == INF or (capacity and total[full] > problem.sms):
        return None, None, True, info
    parts = []
    S = full
    while S:
        B = choice[S]
        parts.append(rt.Partition(int(size[B]), tuple(i for i in range(n) if B >> i & 1)))
        S ^= B
    return rt.Solution(tuple(parts)), int(total[full]), False, info


# --------------------------------------------------------------------------- entry point


def solve(problem: rt.RealtimeProblem, *, backend: str = "cpsat", time_limit: float | None = None,
          workers: int | None = None, test: str = "density", capacity: bool = True,
          hint: bool = True, log: bool = False, **options: Any) -> Result:
    """Minimum total SMs of a schedulable partitioning (see module docstring).

    Parameters
    ----------
    problem
        A :class:`instances.realtime.RealtimeProblem`.
    backend
        ``"cpsat"``, ``"highs"`` (density test) or ``"enumerate"`` (density or demand test).
    time_limit
        Seconds for the whole call, model building included (``None``: no limit).
    workers
        Solver threads (CP-SAT default :data:`milp.cpsat.DEFAULT_WORKERS`).
    test
        ``"density"`` (default) or ``"demand"`` (``backend="enumerate"`` only).
    capacity
        Require ``sum m_p <= M``; without it the minimum may exceed ``M``.
    hint
        Start from the SMS heuristic's partitioning.
    log
        Stream the solver's log.

    Returns
    -------
    Result
        ``objective`` = total SMs, ``schedule`` = :class:`instances.realtime.Solution`.

    Examples
    --------
    >>> r = solve(rt.generate(n=5, utilization=3, seed=1), backend="enumerate", test="demand")
    >>> str(r.status), r.objective == r.schedule.total_sms
    ('OPTIMAL', True)
    """
    opt.no_unknown(options, "milp.realtime.solve")
    backend = opt.choice(backend, BACKENDS, "backend")
    limit = opt.time_limit(time_limit)
    workers = opt.workers(workers)
    test = opt.choice(test, rt.TESTS, "test")
    capacity = opt.flag(capacity, "capacity")
    hint = opt.flag(hint, "hint")
    log = opt.flag(log, "log")
    if not isinstance(problem, rt.RealtimeProblem):
        raise TypeError(f"milp.realtime.solve expects an instances.realtime.RealtimeProblem, "
                        f"got {type(problem).__name__}")
    if backend != "enumerate" and test != "density":
        raise OptionError(f"backend {backend!r} models the density test; use backend='enumerate' "
                          "for test='demand'", field="test")
    if backend == "enumerate" and problem.n > MAX_ENUMERATE:
        raise OptionError(f"backend 'enumerate' is for n <= {MAX_ENUMERATE} tasks, got {problem.n}",
                          field="backend")
    deadline = Deadline(limit)
    t0 = time.perf_counter()
    info: dict[str, Any] = {"test": test}

    def result(sol, lb, infeasible=False):
        if sol is not None:
            errors = rt.check(_target(problem, sol, capacity), sol,
                              test="density" if test == "density" else "edf")
            if errors:
                raise SolverError(f"realtime {backend} returned an infeasible solution: {errors[0]}")
        return Result.from_bounds(None if sol is None else float(sol.total_sms),
                                  None if lb is None else float(lb), schedule=sol,
                                  runtime=time.perf_counter() - t0, backend=backend, info=info,
                                  infeasible=infeasible)

    data = model_data(problem)
    l2 = data["l2"]
    if any(v is None for v in l2):
        info["reason"] = "lemma2"      # a task misses its deadline even alone on all M SMs
        return result(None, None, infeasible=True)
    lb = _trivial_bound(problem, l2, test)
    if capacity and lb > problem.sms:
        info["reason"] = "load bound above M"
        return result(None, None, infeasible=True)
    best = _warm_start(problem, test, capacity) if hint else None
    info["warm_start"] = None if best is None else best.total_sms
    if best is None or best.total_sms > lb:
        if backend == "cpsat":
            best, lb, infeasible, more = _solve_cpsat(problem, data, deadline, workers, capacity, best, lb, log)
        elif backend == "highs":
            best, lb, infeasible, more = _solve_highs(problem, data, deadline, workers, capacity, best, lb, log)
        else:
            best, lb, infeasible, more = _solve_enumerate(problem, test, deadline, capacity, l2, best, lb)
        info.update(more)
        if infeasible:
            return result(None, None, infeasible=True)
    return result(best, lb)
