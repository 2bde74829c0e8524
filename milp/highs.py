"""Solving a Pyomo model with HiGHS (through highspy and Pyomo's appsi interface), for every family.

One place for what each Pyomo backend of the toolkit needs: a clear error when
HiGHS is missing, a time limit (seconds or a shared
:class:`~instances.options.Deadline`, which then also covers Pyomo's
translation of the model for HiGHS), a zero optimality gap by default (HiGHS
stops at 0.01 % otherwise, which is not a proof), a warm start, a thread
count, and a read-back that tells a proven optimum from an incumbent and keeps
the dual bound only when it is finite.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from instances.errors import SolverError
from instances import options as opt
from instances.options import Deadline, known_options

__all__ = ["HighsOutcome", "solve_highs"]


@dataclass
class HighsOutcome:
    """What a HiGHS solve ended with.

    Attributes
    ----------
    termination
        Pyomo's termination condition, as text (``"optimal"``, ``"maxTimeLimit"``, ...).
    optimal, infeasible
        Whether HiGHS proved optimality / infeasibility.
    has_solution
        A feasible solution exists and its values are loaded into the model's variables.
    bound
        The proven dual bound (``None`` when HiGHS gives no finite one).
    objective
        The incumbent's objective value (``None`` without a solution).
    stats
        Solver statistics when HiGHS reports them (node count, model status).
    """

    termination: str
    optimal: bool
    infeasible: bool
    has_solution: bool
    bound: float | None
    objective: float | None
    stats: dict[str, Any] = field(default_factory=dict)


@known_options
def solve_highs(model: Any, time_limit: float | Deadline | None = None, workers: int | None = None, *,
                warmstart: bool = False, rel_gap: float = 0.0, abs_gap: float = 1e-9, log: bool = False,
                options: dict[str, Any] | None = None) -> HighsOutcome:
    """Solve a Pyomo model with HiGHS and load the incumbent, if any, into its variables.

    Parameters
    ----------
    model
        A Pyomo ``ConcreteModel`` with one objective.
    time_limit
        Seconds for the solve, or a :class:`~instances.options.Deadline`
        covering the model's translation as well (``None``: no limit). When
        the deadline is spent once the model is translated, HiGHS does not
        run and the outcome has no solution (``termination`` says so).
    workers
        HiGHS threads (``None``: HiGHS's default).
    warmstart
        Use the variables' current values as a starting solution.
    rel_gap, abs_gap
        Optimality gaps at which HiGHS may stop and call the result optimal.
    log
        Stream HiGHS's log.
    options
        Further HiGHS options, e.g. ``{"random_seed": 0}``.

    Examples
    --------
    >>> import pyomo.environ as pyo
    >>> m = pyo.ConcreteModel(); m.x = pyo.Var(within=pyo.Integers, bounds=(0, 10))
    >>> m.c = pyo.Constraint(expr=3 * m.x <= 14); m.o = pyo.Objective(expr=m.x, sense=pyo.maximize)
    >>> out = solve_highs(m); out.optimal, pyo.value(m.x), out.bound
    (True, 4.0, 4.0)
    """
    from pyomo.contrib.appsi.solvers.highs import Highs

    if not isinstance(time_limit, Deadline):
        time_limit = opt.time_limit(time_limit)
    workers = opt.workers(workers)
    solver = Highs()
    if not solver.available():
        raise SolverError("Pyomo cannot find HiGHS (appsi_highs); install highspy")
    solver.config.load_solution = False
    solver.config.stream_solver = bool(log)
    solver.config.warmstart = bool(warmstart)
    deadline = time_limit if isinstance(time_limit, Deadline) else None
    if deadline is None and time_limit is not None:
        solver.config.time_limit = max(0.01, float(time_limit))
    highs_options: dict[str, Any] = {"mip_rel_gap": rel_gap, "mip_abs_gap": abs_gap}
    if workers is not None:
        highs_options["threads"] = int(workers)
        from bounds.highs_lp import use_threads  # here: importing milp stays light

        use_threads(int(workers))
    highs_options.update(options or {})
    solver.highs_options = highs_options
    if deadline is not None:
        # the translation into HiGHS can take longer than the solve: charge it to the deadline
        solver.set_instance(model)
        remaining = deadline.remaining()
        if remaining is not None:
            if remaining <= 0:
                return HighsOutcome("skipped: time limit spent translating the model", False, False, False,
                                    None, None)
            solver.config.time_limit = remaining
    res = solver.solve(model)
    tc = res.termination_condition
    name = getattr(tc, "name", str(tc))
    has_solution = res.best_feasible_objective is not None
    if has_solution:
        res.solution_loader.load_vars()
    try:
        bound = float(res.best_objective_bound)
        bound = bound if math.isfinite(bound) else None
    except (TypeError, ValueError):
        bound = None
    stats: dict[str, Any] = {}
    try:
        info = solver._solver_model.getInfo()
        stats = {"nodes": int(info.mip_node_count),
                 "highs_status": solver._solver_model.modelStatusToString(solver._solver_model.getModelStatus())}
    except Exception:  # statistics are a courtesy, never a reason to fail
        pass
    return HighsOutcome(termination=name, optimal=name == "optimal", infeasible="infeasible" in name.lower(),
                        has_solution=has_solution, bound=bound,
                        objective=res.best_feasible_objective if has_solution else None, stats=stats)
