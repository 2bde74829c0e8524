"""Exact models for weighted tardiness on heterogeneous GPUs (heterogeneous-GPU scheduling paper, Sec. I.D).

Backends of :func:`solve` (``backend=``):

- ``"auto"`` (the default, and what ``milp.solve_optimal(problem)`` uses):
  ``"ssdp"`` when it applies (one usable GPU, a common arrival time, data
  exact on an integer grid: the OR-Library case), otherwise ``"colgen"``
  where its grid exists (always for the generator's data), else ``"cpsat"``.
- ``"ssdp"``: successive sublimation dynamic programming for one machine
  (:mod:`milp.hetero_ssdp`; Tanaka, Fujikuma & Araki 2009), by far the
  strongest method where it applies.
- ``"colgen"``: branch-and-price over the arc-time-indexed formulation:
  the root (:mod:`milp.hetero_colgen`: the column-generation bound of
  :mod:`bounds.hetero_colgen` and a restricted-master schedule), then the
  tree of :mod:`milp.hetero_bnp` for the rest of the budget where the grid
  holds the data exactly (always for the generator's data); elsewhere ILS
  walks at the root and ``"cpsat"`` with its bound and best schedule for
  the rest.
- ``"cpsat"``: OR-Tools CP-SAT. One optional fixed-size interval per task and
  eligible GPU (presence = ``x_ij``), one no-overlap constraint per GPU,
  exactly one present interval per task, ``s_i >= a_i``, tardiness
  ``T_i >= c_i - d_i``: formulation (1)-(6) with intervals for the
  disjunctions.
- ``"highs"``: the problem statement's MILP (1)-(6) as written, in Pyomo, solved by HiGHS.
  Variables ``x_ij``, ``s_i``, ``c_i``, ``y_ik`` (order of the pair
  ``i < k``) and ``T_i >= c_i - d_i, T_i >= 0`` (the usual linearisation of
  ``max(0, c_i - d_i)`` in eq. 1). The big-M of eq. (6) is taken from the
  data: ``H = max_i a_i + sum_i max_{j: m_i <= M_j} p_ij``, the latest
  completion of a semi-active schedule. Some optimal schedule is semi-active,
  so the bound ``c_i <= H`` that we add cuts no optimum, and with it the
  deactivated side of (6), ``s_i + p_i - s_k <= H``, always holds.

Both model backends are warm-started from :func:`heuristics.hetero.ils` (or
the ``hint``) and receive the lower bound of :func:`bounds.hetero.lower_bound`
(computed within the same time budget): HiGHS as the constraint
``sum_i w_i T_i >= LB``, CP-SAT likewise when its integer scaling is exact.
The reported bound is the larger of the solver's and ours.

Integer scaling for CP-SAT (:func:`resolution`): times are multiplied by a
power of ten ``R`` and weights by ``Rw``, the smallest that make the data
integral, as long as the scaled horizon stays below :data:`MAX_SCALED`;
otherwise the coarsest power of ten that keeps it there, with durations and
arrivals rounded down, deadlines up and weights down. That model is a
relaxation: every real schedule maps to one of its solutions that costs no
more (start times rounded down), so its bound divided by ``R Rw`` stays
valid for the user's data, while its schedule is re-timed with the true data;
OPTIMAL then follows only if the true objective meets a bound.

The contract of :mod:`milp.result` holds for every backend: OPTIMAL only
within :data:`milp.TOLERANCE` of a valid bound; on a time limit FEASIBLE with
the best checked schedule known (at least the warm start); the time limit
covers the whole call, model building included; options are checked; an
empty problem is OPTIMAL with objective 0; the first call of a process
first solves a tiny problem of the same kind outside the limit, so that
numba's one-time load of the compiled kernels (like the one-time import of
a solver library) does not count against it. Every returned schedule is
re-timed as the semi-active schedule of the solver's per-GPU sequences and
passed through :func:`instances.hetero.check`. Tasks that fit no GPU are left
out of the models and reported unscheduled.

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
from typing import Any, Sequence

import numpy as np

from bounds.hetero import power_of_ten
from instances import options as opt
from instances.errors import OptionError, SolverError
from instances.hetero import HeteroProblem, Schedule, check, evaluate_sequences, weighted_tardiness
from instances.options import Deadline
from milp.result import Result

__all__ = ["solve", "big_m", "resolution", "build_pyomo", "BACKENDS", "MAX_SCALED"]

#: Backends of :func:`solve`.
BACKENDS = ("auto", "ssdp", "colgen", "cpsat", "highs")
#: Share of the budget the ``"colgen"`` backend's root takes before CP-SAT gets the rest.
COLGEN_SHARE = 0.8
#: Largest scaled horizon of the CP-SAT model (integer time units).
MAX_SCALED = 10 ** 9


#: Kinds of problem (``"single"``, ``"several"``) whose compiled kernels this process has loaded.
_LOADED: set[str] = set()


def _load_kernels(problem: HeteroProblem) -> None:
    """Solve a tiny problem of ``problem``'s kind once per process, before the caller's clock starts.

    A process's first compiled call loads numba's implementation and each
    kernel's cached machine code (a quarter to half a second on a quiet
    machine, seconds under load), and no deadline check can cut that short,
    so a first solve with a short limit would overrun it by that much.
    """
    if len(_LOADED) == 2:   # both kinds loaded: nothing to decide on later calls
        return
    from bounds.hetero import single_machine
    from instances.hetero import generate, generate_orlib

    kind = "single" if single_machine(problem) is not None else "several"
    if kind in _LOADED:
        return
    _LOADED.add(kind)
    tiny = generate_orlib(8, tf=0.6, rdd=0.6, seed=0) if kind == "single" else generate(6, seed=0)
    solve(tiny, time_limit=None)


@opt.known_options
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


@opt.known_options
def resolution(problem: HeteroProblem) -> tuple[int, int, bool]:
    """``(R, Rw, exact)``: time and weight scale factors for CP-SAT.

    Examples
    --------
    >>> from instances import hetero
    >>> resolution(hetero.generate(8, gpus=("T4", "V100"), seed=1))
    (10, 1, True)
    """
    ok = problem.eligible.any(axis=1)
    times = np.concatenate([problem.p[ok][problem.eligible[ok]], problem.arrival[ok], problem.deadline[ok]])
    H = max(big_m(problem), float(np.abs(problem.deadline[ok]).max(initial=0.0)), 1e-300)
    R = power_of_ten(times, top=12)
    exact = R is not None and H * R <= MAX_SCALED
    if not exact:
        # the coarsest grid that keeps the scaled horizon small enough
        R = 10 ** max(0, int(math.floor(math.log10(MAX_SCALED / H))))
    Rw = power_of_ten(problem.weight[ok])
    if Rw is None:
        Rw, exact = 10 ** 6, False
    return int(R), int(Rw), exact


def _checked(problem: HeteroProblem, seqs: list[list[int]], backend: str) -> tuple[Schedule, float]:
    schedule = evaluate_sequences(problem, seqs)
    errors = check(problem, schedule)
    if errors:
        raise SolverError(f"{backend}: schedule fails the checker: {errors[:3]}")
    return schedule, weighted_tardiness(problem, schedule)


def _hint_sequences(problem: HeteroProblem, hint: Schedule | Sequence | None):
    if hint is None:
        return None
    if isinstance(hint, Schedule):
        errors = check(problem, hint)
        if errors:
            raise OptionError(f"the hint is not a feasible schedule: {errors[:2]}", field="hint")
        return hint.sequences(problem)
    try:
        seqs = [[int(i) for i in s] for s in hint]
    except (TypeError, ValueError):
        raise OptionError("must be a Schedule or one sequence of task indices per GPU", field="hint") from None
    if len(seqs) != problem.m:
        raise OptionError(f"needs one sequence per GPU ({problem.m}), got {len(seqs)}", field="hint")
    flat = sorted(i for s in seqs for i in s)
    if flat != sorted(int(i) for i in np.flatnonzero(problem.eligible.any(axis=1))):
        raise OptionError("must list every schedulable task exactly once", field="hint")
    if check(problem, evaluate_sequences(problem, seqs)):
        raise OptionError("puts a task on a GPU it does not fit", field="hint")
    return seqs


# ---------------------------------------------------------------------------
# CP-SAT
# ---------------------------------------------------------------------------

def _solve_cpsat(problem, dl: Deadline, workers, seqs_hint, lb: float, log, seed):
    from ortools.sat.python import cp_model

    from milp import cpsat

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
    objective = sum(int(W[i]) * T[i] for i in tasks)
    md.minimize(objective)                                               # eq. (1)
    if exact and lb > 0:
        # valid: with exact scaling the model's costs are the user's times R * Rw
        md.add(objective >= int(math.ceil(lb * R * Rw - 1e-6 * max(1.0, lb * R * Rw))))
    if seqs_hint is not None:
        sched = evaluate_sequences(problem, seqs_hint)
        pairs = []
        for a in sched.assignments:
            i, j = problem.index[a.task], problem.gpu_index[a.gpu]
            if exact:
                pairs.append((S[i], int(round(a.start * R))))
            for jj in range(problem.m):
                if (i, jj) in X:
                    pairs.append((X[i, jj], int(jj == j)))
        cpsat.set_hints(md, pairs)
    out = cpsat.run(md, time_limit=dl, workers=workers, seed=seed, log=log)
    info = {"resolution": R, "weight_resolution": Rw, "exact_scaling": exact, "horizon": H,
            "solver_status": out.stats.get("solver_status", out.status)}
    bound = None if out.bound is None else out.bound / (R * Rw)
    seqs = None
    if out.has_solution:
        per: list[list[tuple[int, int]]] = [[] for _ in range(problem.m)]
        for (i, j), x in X.items():
            if out.boolean(x):
                per[j].append((out.value(S[i]), i))
        seqs = [[i for _, i in sorted(s)] for s in per]
    return seqs, bound, info


# ---------------------------------------------------------------------------
# Pyomo + HiGHS: the problem statement's MILP (1)-(6)
# ---------------------------------------------------------------------------

class _BuildExpired(RuntimeError):
    """The deadline passed while the Pyomo model was being built."""


@opt.known_options
def build_pyomo(problem: HeteroProblem, lower_bound: float = 0.0, deadline: Deadline | None = None):
    """The MILP (1)-(6) of the heterogeneous-GPU scheduling paper as a Pyomo ``ConcreteModel``.

    Tasks that fit no GPU are left out.

    ``lower_bound > 0`` adds the valid constraint ``objective >= lower_bound``.
    With a ``deadline``, building stops (``_BuildExpired``) once it passes:
    the O(n^2 m) disjunctions can take longer than a short time limit.

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
    total = sum(problem.tasks[i].weight * mdl.T[i] for i in tasks)
    mdl.obj = pyo.Objective(expr=total, sense=pyo.minimize)                                   # (1)
    if lower_bound > 0:
        mdl.lb = pyo.Constraint(expr=total >= float(lower_bound))
    mdl.tard = pyo.Constraint(tasks, rule=lambda m_, i: m_.T[i] >= m_.c[i] - problem.tasks[i].deadline)
    mdl.assign = pyo.Constraint(tasks, rule=lambda m_, i: sum(m_.x[i, j] for j in G) == 1)  # (2)
    mdl.memory = pyo.Constraint(
        [(i, j) for i in tasks for j in G if math.isfinite(cap[j])],
        rule=lambda m_, i, j: m_.x[i, j] * mem[i] <= cap[j])                                # (3)
    mdl.timing = pyo.Constraint(
        tasks, rule=lambda m_, i: m_.c[i] == m_.s[i] + sum(m_.x[i, j] * float(p[i, j]) for j in G))  # (4)
    mdl.arrival = pyo.Constraint(tasks, rule=lambda m_, i: m_.s[i] >= problem.tasks[i].arrival)   # (5)
    def dur(m_, i):
        if deadline is not None and deadline.expired():
            raise _BuildExpired("time limit reached while building the model")
        return sum(m_.x[i, j] * float(p[i, j]) for j in G)

    idx = [(i, k, j) for (i, k) in pairs for j in G]
    mdl.disj_a = pyo.Constraint(idx, rule=lambda m_, i, k, j: m_.s[i] + dur(m_, i) <= m_.s[k] + H * (
        3 - m_.x[i, j] - m_.x[k, j] - m_.y[i, k]))                                          # (6)
    mdl.disj_b = pyo.Constraint(idx, rule=lambda m_, i, k, j: m_.s[k] + dur(m_, k) <= m_.s[i] + H * (
        3 - m_.x[i, j] - m_.x[k, j] - (1 - m_.y[i, k])))
    mdl.tasks_in_model = tasks
    return mdl


def _solve_highs(problem, dl: Deadline, workers, seqs_hint, lb: float, log):
    import pyomo.environ as pyo

    from milp.highs import solve_highs

    info: dict[str, Any] = {"big_m": big_m(problem)}
    import logging

    quiet = logging.getLogger("pyomo.core")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)  # an expired build is expected here, not an error worth a log line
    try:
        mdl = build_pyomo(problem, lb, deadline=dl)
    except _BuildExpired:
        info["termination"] = "time limit spent building the model"
        return None, None, info
    finally:
        quiet.setLevel(level)
    tasks = mdl.tasks_in_model
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
    rem = dl.remaining()
    if rem is not None and rem <= 0.05:
        info["termination"] = "time limit spent building the model"
        return None, None, info
    # the deadline itself, not the seconds left now: Pyomo's translation into HiGHS is charged to it
    out = solve_highs(mdl, dl, workers, warmstart=seqs_hint is not None, abs_gap=1e-7, log=log)
    info.update(termination=out.termination, **out.stats)
    if not out.has_solution:
        return None, out.bound, info
    per: list[list[tuple[float, int]]] = [[] for _ in range(problem.m)]
    for i in tasks:
        j = max(range(problem.m), key=lambda jj: pyo.value(mdl.x[i, jj]))
        per[j].append((pyo.value(mdl.s[i]), i))
    return [[i for _, i in sorted(s)] for s in per], out.bound, info


# ---------------------------------------------------------------------------
# entry point
# ---------------------------------------------------------------------------

def _our_bound(problem: HeteroProblem, hint: Schedule, dl: Deadline, share: float = 0.15,
               cap: float = 5.0) -> tuple[float, dict]:
    """:func:`bounds.hetero.lower_bound` within ``share`` of the remaining budget (at most ``cap`` s)."""
    from bounds import hetero as hb
    from bounds.hetero_colgen import colgen_bound
    from bounds.hetero_multi import multi_bound

    rem = dl.remaining()
    budget = cap if rem is None else min(cap, share * rem)
    if budget <= 0.05:
        return 0.0, {"bound": "no time"}
    res = hb.lagrangian(problem, hint, time_limit=budget)
    if res is not None:
        return float(res.bound), {"bound": "single-machine Lagrangian", "bound_value": float(res.bound)}
    # the multi-GPU passes are slower (idle time, one network per GPU type) and the exact models
    # rarely close these instances themselves: the bound gets a larger share
    budget = cap * 2 if rem is None else min(2 * cap, 1.5 * share * rem)
    cg = colgen_bound(problem, hint, time_limit=budget)
    if cg is not None:
        return float(cg.bound), {"bound": "column generation", "bound_value": float(cg.bound)}
    mb = multi_bound(problem, hint, time_limit=budget)
    return float(mb.bound), {"bound": "multi-GPU Lagrangian", "bound_value": float(mb.bound)}


def solve(problem: HeteroProblem, *, backend: str = "auto", time_limit: float | None = None,
          workers: int | None = None, hint: Schedule | Sequence | None = None,
          log: bool = False, seed: int = 0, bound: bool = True, **options: Any) -> Result:
    """Solve the heterogeneous weighted-tardiness problem exactly (or to the time limit).

    Parameters
    ----------
    problem
        A :class:`instances.hetero.HeteroProblem`.
    backend
        ``"auto"`` (default: ``"ssdp"`` where it applies, else ``"colgen"``
        where its grid exists, else ``"cpsat"``), ``"ssdp"``, ``"colgen"``,
        ``"cpsat"`` or ``"highs"``; see the module docstring.
    time_limit
        Seconds for the whole call (``None``: no limit).
    workers
        CP-SAT workers / HiGHS threads.
    hint
        A schedule (or per-GPU index sequences) to start from; default: the
        ILS with ``min(1 s, 10 %)`` of the budget, at most
        :data:`milp.hetero_colgen.ILS_KICKS_PER_TASK` kicks per task.
    log
        Print the solver log.
    seed
        Seed of the ILS warm start and of CP-SAT.
    bound
        Compute :func:`bounds.hetero.lower_bound` for the model backends
        (``min(5 s, 15 %)`` of the budget).

    Returns
    -------
    Result
        ``objective`` (on the user's data), ``lower_bound`` (valid for it),
        ``status`` (OPTIMAL only when proven), ``schedule`` (checked).

    Examples
    --------
    >>> from instances import hetero
    >>> res = solve(hetero.orlib_wt40(1), time_limit=60)
    >>> str(res.status), res.objective, res.backend
    ('OPTIMAL', 913.0, 'ssdp')
    """
    opt.no_unknown(options, "milp.hetero.solve")
    if not isinstance(problem, HeteroProblem):
        raise OptionError(f"expected a HeteroProblem, got {type(problem).__name__}", field="problem")
    opt.choice(backend, BACKENDS, "backend")
    opt.time_limit(time_limit)
    opt.workers(workers)
    opt.flag(log, "log")
    opt.flag(bound, "bound")
    seed = opt.seed(seed, allow_none=False)
    _load_kernels(problem)
    dl = Deadline(time_limit)
    seqs_hint = _hint_sequences(problem, hint)
    if not problem.eligible.any(axis=1).any():
        sched = evaluate_sequences(problem, [[] for _ in problem.gpus])
        return Result.from_bounds(0.0, 0.0, schedule=sched, runtime=dl.elapsed(),
                                  backend=backend, info={"empty": True})
    if backend == "auto":
        from milp.hetero_ssdp import applies

        from milp import hetero_colgen

        backend = "ssdp" if applies(problem) else ("colgen" if hetero_colgen.applies(problem) else "cpsat")
    hint_sched = None if seqs_hint is None else evaluate_sequences(problem, seqs_hint)
    if backend == "ssdp":
        from milp.hetero_ssdp import solve_ssdp

        return solve_ssdp(problem, dl, hint=hint_sched, log=log, seed=seed)
    if hint_sched is None:
        from heuristics.hetero import ils
        from milp.hetero_colgen import ILS_KICKS_PER_TASK

        rem = dl.remaining()
        hint_sched = ils(problem, time_limit=1.0 if rem is None else max(0.01, min(1.0, 0.1 * rem)),
                         max_iter=ILS_KICKS_PER_TASK * problem.n, seed=seed)
        seqs_hint = hint_sched.sequences(problem)
    hint_sched, hint_obj = _checked(problem, seqs_hint, "warm start")
    if backend == "colgen":
        from milp import hetero_bnp
        from milp.hetero_colgen import root

        best_sched, lb, info, last = root(problem, hint_sched, dl, share=COLGEN_SHARE, log=log, seed=seed,
                                          tree=True)
        seqs_hint = best_sched.sequences(problem)
        hint_sched, hint_obj = _checked(problem, seqs_hint, "column generation")
        if not info["proved"] and not dl.expired() and hetero_bnp.applies(last):
            best_sched, tree_lb, tinfo = hetero_bnp.branch_and_price(problem, hint_sched, last, dl, log=log,
                                                                     seed=seed)
            info.update({"tree_" + k: v for k, v in tinfo.items()})
            lb = max(lb, tree_lb)
            seqs_hint = best_sched.sequences(problem)
            hint_sched, hint_obj = _checked(problem, seqs_hint, "branch-and-price")
            info["proved"] = tinfo["proved"]
        if info["proved"] or dl.expired():
            return Result.from_bounds(hint_obj, lb, schedule=hint_sched, runtime=dl.elapsed(), backend=backend,
                                      info=info)
    else:
        lb, info = (0.0, {}) if not bound else _our_bound(problem, hint_sched, dl)
    if backend in ("cpsat", "colgen"):
        seqs, model_bound, minfo = _solve_cpsat(problem, dl, workers, seqs_hint, lb, log, seed)
    else:
        seqs, model_bound, minfo = _solve_highs(problem, dl, workers, seqs_hint, lb, log)
    info.update(minfo)
    best, best_obj = hint_sched, hint_obj
    if seqs is not None:
        sched, obj = _checked(problem, seqs, backend)
        if obj < best_obj:
            best, best_obj = sched, obj
        else:
            info["solver_objective_not_better"] = obj
    bounds_known = [b for b in (lb, model_bound) if b is not None]
    lower = max(bounds_known) if bounds_known else None
    return Result.from_bounds(best_obj, lower, schedule=best, runtime=dl.elapsed(), backend=backend, info=info)
