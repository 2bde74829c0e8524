"""Exact models for weighted tardiness on heterogeneous GPUs (seed 002, Sec. I.D).

Two backends of :func:`solve`:

- ``"highs"``: the seed's MILP (1)-(6) as written, in Pyomo, solved by HiGHS.
  Variables ``x_ij`` (assignment), ``s_i``, ``c_i``, ``y_ik`` (order of the
  pair ``i < k``) and ``T_i >= c_i - d_i, T_i >= 0`` (the usual
  linearisation of ``max(0, c_i - d_i)`` in eq. 1). The big-M of eq. (6) is
  taken from the data: ``H = max_i a_i + sum_i max_{j: m_i <= M_j} p_ij``, the
  latest completion of a semi-active schedule (every GPU idles only while
  waiting for an arrival). Some optimal schedule is semi-active, so the bound
  ``c_i <= H`` that we add cuts no optimum, and with it the deactivated side
  of (6), ``s_i + p_i - s_k <= H``, always holds.
- ``"cpsat"``: OR-Tools CP-SAT. One optional fixed-size interval per task and
  eligible GPU (presence = ``x_ij``), one no-overlap constraint per GPU,
  exactly one present interval per task, ``s_i >= a_i``, tardiness variables
  as above. CP-SAT needs integers: times are multiplied by a resolution
  ``R`` and weights by ``Rw`` (powers of ten, the smallest that make the
  data integral, so usually exact). If no power up to 10^6 is exact the
  model rounds durations, arrivals and weights down and deadlines up (a
  relaxation: its optimum / (R Rw) stays a valid lower bound) and the
  schedule is re-timed with the true data; OPTIMAL is then claimed only if
  the re-timed objective meets the bound.

Every returned schedule is re-timed as the semi-active schedule of the
solver's per-GPU sequences and passed through :func:`instances.hetero.check`.
Tasks that fit no GPU are left out of the models and reported unscheduled.

Examples
--------
>>> from instances import hetero
>>> from milp import solve_optimal
>>> pb = hetero.generate(6, gpus=("T4", "A100-80GB"), seed=0)
>>> a = solve_optimal(pb, backend="cpsat", time_limit=20)
>>> b = solve_optimal(pb, backend="highs", time_limit=20)
>>> str(a.status), str(b.status), abs(a.objective - b.objective) < 1e-6
('OPTIMAL', 'OPTIMAL', True)
"""

from __future__ import annotations

import math
import time
from typing import Any, Sequence

import numpy as np

from instances.errors import SolverError
from instances.hetero import HeteroProblem, Schedule, check, evaluate_sequences, weighted_tardiness
from milp.highs import solve_highs
from milp.result import Result, Status

__all__ = ["solve", "big_m", "resolution"]

_TOL = 1e-6


def big_m(problem: HeteroProblem) -> float:
    """The big-M ``H`` of eq. (6) from the data (see the module docstring).

    Examples
    --------
    >>> from instances import hetero
    >>> big_m(hetero.orlib_wt40(1)) == sum(t.workload for t in hetero.orlib_wt40(1).tasks)
    True
    """
    ok = problem.eligible.any(axis=1)
    if not ok.any():
        return 0.0
    pmax = np.where(problem.eligible, problem.p, 0.0).max(axis=1)[ok]
    return float(problem.arrival[ok].max() + pmax.sum())


def _power_of_ten(values: np.ndarray, top: int = 6) -> int | None:
    """Smallest 10^k (k <= top) that makes every value an integer (up to float rounding)."""
    values = np.asarray(values, dtype=float)
    for k in range(top + 1):
        scaled = values * 10 ** k
        if np.all(np.abs(scaled - np.rint(scaled)) <= 1e-9 * np.maximum(1.0, np.abs(scaled))):
            return 10 ** k
    return None


def resolution(problem: HeteroProblem) -> tuple[int, int, bool]:
    """``(R, Rw, exact)``: time and weight scale factors for CP-SAT.

    Examples
    --------
    >>> from instances import hetero
    >>> resolution(hetero.generate(8, gpus=("T4", "V100"), seed=1))
    (10, 1, True)
    """
    ok = problem.eligible.any(axis=1)
    times = np.concatenate([problem.p[ok][problem.eligible[ok]], problem.arrival[ok],
                            problem.deadline[ok]])
    R = _power_of_ten(times)
    Rw = _power_of_ten(problem.weight[ok])
    exact = R is not None and Rw is not None
    return (R or 10 ** 4), (Rw or 10 ** 4), exact


def _finish(problem: HeteroProblem, seqs: list[list[int]] | None, lb: float | None,
            proven: bool, runtime: float, backend: str, info: dict[str, Any]) -> Result:
    """Re-time, check, and decide the status honestly."""
    if seqs is None:
        status = Status.UNKNOWN
        return Result(None, lb, status, runtime, None, backend, info)
    schedule = evaluate_sequences(problem, seqs)
    errors = check(problem, schedule)
    if errors:
        raise SolverError(f"{backend}: solver schedule fails the checker: {errors[:3]}")
    obj = weighted_tardiness(problem, schedule)
    if lb is not None and lb > obj + _TOL * max(1.0, abs(obj)):
        raise SolverError(f"{backend}: lower bound {lb} above the objective {obj}")
    optimal = proven and lb is not None and obj <= lb + _TOL * max(1.0, abs(obj))
    if optimal:
        lb = min(lb, obj)
    return Result(obj, lb, Status.OPTIMAL if optimal else Status.FEASIBLE, runtime, schedule,
                  backend, info)


def _hint_sequences(problem: HeteroProblem, hint: Schedule | Sequence | None):
    if hint is None:
        return None
    if isinstance(hint, Schedule):
        return hint.sequences(problem)
    return [list(s) for s in hint]


# ---------------------------------------------------------------------------
# CP-SAT
# ---------------------------------------------------------------------------

def _solve_cpsat(problem, time_limit, workers, hint, log):
    from ortools.sat.python import cp_model

    t0 = time.perf_counter()
    R, Rw, exact = resolution(problem)
    tasks = [i for i in range(problem.n) if problem.eligible[i].any()]
    elig = problem.eligible
    if exact:
        P = np.rint(problem.p * R).astype(np.int64)
        A = np.rint(problem.arrival * R).astype(np.int64)
        D = np.rint(problem.deadline * R).astype(np.int64)
        W = np.rint(problem.weight * Rw).astype(np.int64)
    else:  # relaxation: shorter, earlier, later due, lighter
        P = np.floor(problem.p * R + 1e-9).astype(np.int64)
        A = np.floor(problem.arrival * R + 1e-9).astype(np.int64)
        D = np.ceil(problem.deadline * R - 1e-9).astype(np.int64)
        W = np.floor(problem.weight * Rw + 1e-9).astype(np.int64)
    H = int(max(A[tasks].max() + sum(int(P[i][elig[i]].max()) for i in tasks), 0))
    md = cp_model.CpModel()
    S, C, T, X = {}, {}, {}, {}
    per_gpu: list[list] = [[] for _ in range(problem.m)]
    for i in tasks:
        S[i] = md.new_int_var(int(A[i]), H, f"s{i}")
        C[i] = md.new_int_var(0, H, f"c{i}")
        T[i] = md.new_int_var(0, max(0, H - int(D[i])), f"T{i}")
        for j in range(problem.m):
            if elig[i, j]:
                X[i, j] = md.new_bool_var(f"x{i}_{j}")
                per_gpu[j].append(md.new_optional_fixed_size_interval_var(
                    S[i], int(P[i, j]), X[i, j], f"iv{i}_{j}"))
        js = [j for j in range(problem.m) if elig[i, j]]
        md.add_exactly_one(X[i, j] for j in js)                          # eqs. (2), (3)
        md.add(C[i] == S[i] + sum(int(P[i, j]) * X[i, j] for j in js))  # eq. (4)
        md.add(T[i] >= C[i] - int(D[i]))
    for j in range(problem.m):
        if len(per_gpu[j]) > 1:
            md.add_no_overlap(per_gpu[j])                                # eq. (6)
    md.minimize(sum(int(W[i]) * T[i] for i in tasks))                    # eq. (1)
    seqs_hint = _hint_sequences(problem, hint)
    if seqs_hint is not None:
        sched = evaluate_sequences(problem, seqs_hint)
        for a in sched.assignments:
            i, j = problem.index[a.task], problem.gpu_index[a.gpu]
            if exact:
                md.add_hint(S[i], int(round(a.start * R)))
            for jj in range(problem.m):
                if (i, jj) in X:
                    md.add_hint(X[i, jj], int(jj == j))
    solver = cp_model.CpSolver()
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = float(time_limit)
    if workers:
        solver.parameters.num_workers = int(workers)
    solver.parameters.log_search_progress = bool(log)
    st = solver.solve(md)
    runtime = time.perf_counter() - t0
    info = {"resolution": R, "weight_resolution": Rw, "exact_scaling": exact,
            "horizon": H, "status": solver.status_name(st)}
    if st == cp_model.INFEASIBLE:  # cannot happen for valid data: every task has a GPU
        return Result(None, None, Status.INFEASIBLE, runtime, None, "cpsat", info)
    if st not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return Result(None, None, Status.UNKNOWN, runtime, None, "cpsat", info)
    lb = solver.best_objective_bound / (R * Rw)
    seqs: list[list[tuple[int, int]]] = [[] for _ in range(problem.m)]
    for (i, j), x in X.items():
        if solver.value(x):
            seqs[j].append((solver.value(S[i]), i))
    seqs_out = [[i for _, i in sorted(s)] for s in seqs]
    return _finish(problem, seqs_out, lb, st == cp_model.OPTIMAL, runtime, "cpsat", info)


# ---------------------------------------------------------------------------
# Pyomo + HiGHS: the seed's MILP (1)-(6)
# ---------------------------------------------------------------------------

def build_pyomo(problem: HeteroProblem):
    """The MILP (1)-(6) of seed 002 as a Pyomo ``ConcreteModel`` (tasks that fit no GPU left out).

    Examples
    --------
    >>> from instances import hetero
    >>> mdl = build_pyomo(hetero.generate(3, gpus=("T4", "V100"), seed=0))
    >>> len(mdl.y), len(mdl.disj_a)
    (3, 6)
    """
    import pyomo.environ as pyo

    tasks = [i for i in range(problem.n) if problem.eligible[i].any()]
    G = range(problem.m)
    p = problem.p
    H = big_m(problem)
    mem = [t.memory for t in problem.tasks]
    cap = [g.memory for g in problem.gpus]
    pairs = [(i, k) for a, i in enumerate(tasks) for k in tasks[a + 1:]]
    mdl = pyo.ConcreteModel(name=problem.name or "hetero")
    mdl.x = pyo.Var(tasks, G, domain=pyo.Binary)
    mdl.s = pyo.Var(tasks, bounds=(0, H))
    mdl.c = pyo.Var(tasks, bounds=(0, H))
    mdl.T = pyo.Var(tasks, domain=pyo.NonNegativeReals)
    mdl.y = pyo.Var(pairs, domain=pyo.Binary)
    mdl.obj = pyo.Objective(expr=sum(problem.tasks[i].weight * mdl.T[i] for i in tasks),
                            sense=pyo.minimize)                                       # (1)
    mdl.tard = pyo.Constraint(tasks, rule=lambda m_, i: m_.T[i] >= m_.c[i] - problem.tasks[i].deadline)
    mdl.assign = pyo.Constraint(tasks, rule=lambda m_, i: sum(m_.x[i, j] for j in G) == 1)  # (2)
    mdl.memory = pyo.Constraint(
        [(i, j) for i in tasks for j in G if math.isfinite(cap[j])],
        rule=lambda m_, i, j: m_.x[i, j] * mem[i] <= cap[j])                                # (3)
    mdl.timing = pyo.Constraint(
        tasks, rule=lambda m_, i: m_.c[i] == m_.s[i] + sum(m_.x[i, j] * float(p[i, j]) for j in G))  # (4)
    mdl.arrival = pyo.Constraint(tasks, rule=lambda m_, i: m_.s[i] >= problem.tasks[i].arrival)   # (5)
    dur = lambda m_, i: sum(m_.x[i, j] * float(p[i, j]) for j in G)  # noqa: E731
    idx = [(i, k, j) for (i, k) in pairs for j in G]
    mdl.disj_a = pyo.Constraint(idx, rule=lambda m_, i, k, j: m_.s[i] + dur(m_, i) <= m_.s[k] + H * (
        3 - m_.x[i, j] - m_.x[k, j] - m_.y[i, k]))                                          # (6)
    mdl.disj_b = pyo.Constraint(idx, rule=lambda m_, i, k, j: m_.s[k] + dur(m_, k) <= m_.s[i] + H * (
        3 - m_.x[i, j] - m_.x[k, j] - (1 - m_.y[i, k])))
    mdl.tasks_in_model = tasks
    return mdl


def _solve_highs(problem, time_limit, workers, hint, log):
    import pyomo.environ as pyo

    t0 = time.perf_counter()
    mdl = build_pyomo(problem)
    tasks = mdl.tasks_in_model
    # ``workers`` is not passed on: HiGHS's branch-and-bound is serial.
    seqs_hint = _hint_sequences(problem, hint)
    if seqs_hint is not None:
        sched = evaluate_sequences(problem, seqs_hint)
        pos = {a.task: (problem.gpu_index[a.gpu], a.start, a.end) for a in sched.assignments}
        for i in tasks:
            j, s, c = pos[problem.tasks[i].name]
            for jj in range(problem.m):
                mdl.x[i, jj].set_value(int(jj == j))
            mdl.s[i].set_value(s)
            mdl.c[i].set_value(c)
            mdl.T[i].set_value(max(0.0, c - problem.tasks[i].deadline))
        for (i, k) in mdl.y:
            mdl.y[i, k].set_value(int(pos[problem.tasks[i].name][1] <= pos[problem.tasks[k].name][1]))
    out = solve_highs(mdl, time_limit, warmstart=seqs_hint is not None, abs_gap=1e-7, log=log)
    runtime = time.perf_counter() - t0
    info: dict[str, Any] = {"termination": out.termination, "big_m": big_m(problem), "workers_ignored": workers}
    if out.infeasible:
        return Result(None, None, Status.INFEASIBLE, runtime, None, "highs", info)
    lb = out.bound
    if not out.has_solution:  # none within the limit
        return Result(None, lb, Status.UNKNOWN, runtime, None, "highs", info)
    seqs: list[list[tuple[float, int]]] = [[] for _ in range(problem.m)]
    for i in tasks:
        j = max(range(problem.m), key=lambda jj: pyo.value(mdl.x[i, jj]))
        seqs[j].append((pyo.value(mdl.s[i]), i))
    seqs_out = [[i for _, i in sorted(s)] for s in seqs]
    return _finish(problem, seqs_out, lb, out.optimal, runtime, "highs", info)


def solve(problem: HeteroProblem, backend: str = "cpsat", time_limit: float | None = None,
          workers: int | None = None, hint: Schedule | Sequence | None = None,
          log: bool = False, **options: Any) -> Result:
    """Solve the heterogeneous weighted-tardiness problem exactly (or to the time limit).

    Parameters
    ----------
    problem
        A :class:`instances.hetero.HeteroProblem`.
    backend
        ``"cpsat"`` or ``"highs"`` (the seed's MILP in Pyomo).
    time_limit
        Seconds; ``None`` for no limit.
    workers
        CP-SAT threads (HiGHS runs its serial branch-and-bound regardless).
    hint
        A schedule (or per-GPU index sequences) to start from.
    log
        Print the solver log.

    Returns
    -------
    Result
        ``objective`` (re-timed, in the problem's units), ``lower_bound``,
        ``status`` (OPTIMAL only when proven), ``schedule`` (checked).

    Examples
    --------
    >>> from instances import hetero
    >>> res = solve(hetero.orlib_wt40(1), time_limit=2, workers=1)
    >>> res.objective >= 913 and res.lower_bound <= 913
    True
    """
    if options:
        raise TypeError(f"unknown option(s) for hetero: {', '.join(sorted(options))}")
    if not isinstance(problem, HeteroProblem):
        raise TypeError(f"expected a HeteroProblem, got {type(problem).__name__}")
    if not problem.eligible.any(axis=1).any():
        sched = evaluate_sequences(problem, [[] for _ in problem.gpus])
        return Result(0.0, 0.0, Status.OPTIMAL, 0.0, sched, backend, {"empty": True})
    if backend == "cpsat":
        return _solve_cpsat(problem, time_limit, workers, hint, log)
    if backend == "highs":
        return _solve_highs(problem, time_limit, workers, hint, log)
    raise ValueError(f"unknown backend {backend!r}; use 'cpsat' or 'highs'")
