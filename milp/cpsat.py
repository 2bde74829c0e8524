"""Running an OR-Tools CP-SAT model, for every problem family.

One place for what each CP-SAT backend of the toolkit needs: the solver
parameters (time limit taken from a shared :class:`~instances.options.Deadline`,
worker count, seed, log), solution hints, the status mapping and the bound
read-back. Models are built by the families in the snake_case OR-Tools API
(``new_bool_var``, ``add``, ``minimize``); this module solves them.

Examples
--------
>>> from ortools.sat.python import cp_model
>>> m = cp_model.CpModel(); x = m.new_int_var(0, 10, "x"); _ = m.add(3 * x >= 14); m.minimize(x)
>>> out = run(m, time_limit=10); out.status, out.value(x), out.bound
('OPTIMAL', 5, 5.0)
"""

from __future__ import annotations

from dataclasses import dataclass, field
import math
from typing import TYPE_CHECKING, Any, Iterable

from instances.errors import SolverError
from instances import options as opt
from instances.options import Deadline, known_options

if TYPE_CHECKING:
    # OR-Tools (and the pandas it imports) loads at the first solve, not with this module: every command
    # imports it to set CATCH_SIGINT, most of them without solving anything by CP-SAT
    from ortools.sat.python import cp_model

__all__ = ["DEFAULT_WORKERS", "SAFE_PARAMETERS", "CATCH_SIGINT", "CpsatRun", "run", "set_hints"]

#: CP-SAT search workers when the caller gives none (the toolkit's reference machines have 2 cores).
DEFAULT_WORKERS = 2

#: Parameters every solve gets unless the caller overrides them. OR-Tools 9.15's inclusion presolve
#: (``ProcessAtMostOneAndLinear`` and the inclusion detection it gates) can remove optimal solutions and
#: then certify a worse optimum (https://github.com/google/or-tools/issues/5293, open for 9.15; the MIG
#: assignment relaxation where it happened is in docs/models/mig_cpsat.md, "A CP-SAT presolve step that
#: is switched off"). A work limit of 0 switches that presolve step off and leaves the rest on.
SAFE_PARAMETERS: dict[str, Any] = {"presolve_inclusion_work_limit": 0}

#: CP-SAT's ``catch_sigint_signal``: on, Ctrl-C stops a search and the solve returns its best solution
#: as if the time limit had been reached. A benchmark sweep switches it off for its whole process
#: (``benchmarks.command``): there an interrupted search must not pass for a time-limited one.
CATCH_SIGINT = True

_STATUSES = ("OPTIMAL", "FEASIBLE", "INFEASIBLE", "UNKNOWN")


@dataclass
class CpsatRun:
    """What one CP-SAT solve ended with.

    Attributes
    ----------
    status
        ``"OPTIMAL"`` (proven for the model), ``"FEASIBLE"``, ``"INFEASIBLE"``
        (proven) or ``"UNKNOWN"`` (no solution within the limit, or the
        budget was spent before the solve could start).
    solver
        The :class:`cp_model.CpSolver` (read solution values with :meth:`value`).
    objective, bound
        The incumbent's objective and the proven bound, in model units
        (``None`` when there is no incumbent / no objective or no finite
        bound; a solve stopped before its first solution may still have a
        bound).
    stats
        Wall time, branches, conflicts and the solver's status name.
    """

    status: str
    solver: cp_model.CpSolver | None
    objective: float | None = None
    bound: float | None = None
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def has_solution(self) -> bool:
        return self.status in ("OPTIMAL", "FEASIBLE")

    def value(self, expr: Any) -> int:
        """Value of a variable or linear expression in the incumbent."""
        return self.solver.value(expr)

    def boolean(self, literal: Any) -> bool:
        """Value of a Boolean literal in the incumbent."""
        return bool(self.solver.boolean_value(literal))


@known_options
def set_hints(model: cp_model.CpModel, values: Iterable[tuple[Any, int | bool]]) -> None:
    """Replace the model's solution hint by ``(variable, value)`` pairs."""
    model.clear_hints()
    for var, val in values:
        model.add_hint(var, int(val))


@known_options
def run(model: cp_model.CpModel, *, time_limit: float | Deadline | None = None, workers: int | None = None,
        seed: int = 0, log: bool = False, parameters: dict[str, Any] | None = None) -> CpsatRun:
    """Solve ``model`` with CP-SAT.

    Parameters
    ----------
    model
        The model, with its objective and any hints already added.
    time_limit
        Seconds, or a :class:`~instances.options.Deadline` whose remaining
        time is the limit (``None``: no limit). A spent budget returns
        ``UNKNOWN`` at once without solving.
    workers
        Search workers (default :data:`DEFAULT_WORKERS`).
    seed
        0 to ``2**32 - 1`` (:func:`instances.options.seed`); CP-SAT gets it modulo ``2**31``.
    log
        Print CP-SAT's search log.
    parameters
        Further ``SatParameters`` fields, e.g. ``{"symmetry_level": 0}``; a
        list sets a repeated field, e.g. ``{"subsolvers": ["max_lp", "core"]}``.
        They are applied after :data:`SAFE_PARAMETERS`, so they may override it.
    """
    limit = time_limit.remaining() if isinstance(time_limit, Deadline) else opt.time_limit(time_limit)
    workers, seed = opt.workers(workers), opt.seed(seed, allow_none=False)
    if limit is not None and limit <= 0:
        return CpsatRun("UNKNOWN", None, stats={"skipped": "time limit spent before the solve"})
    from ortools.sat.python import cp_model

    solver = cp_model.CpSolver()
    solver.parameters.num_workers = int(workers or DEFAULT_WORKERS)
    solver.parameters.random_seed = seed % 2**31  # CP-SAT's is a signed 32-bit integer
    solver.parameters.log_search_progress = bool(log)
    solver.parameters.catch_sigint_signal = CATCH_SIGINT
    if limit is not None:
        solver.parameters.max_time_in_seconds = float(limit)
    for name, value in {**SAFE_PARAMETERS, **(parameters or {})}.items():
        if isinstance(value, (list, tuple)):
            field = getattr(solver.parameters, name)
            field.clear()
            field.extend(value)
        else:
            setattr(solver.parameters, name, value)
    code = solver.solve(model)
    if code == cp_model.MODEL_INVALID:
        raise SolverError(f"CP-SAT rejected the model as invalid: {model.validate()}")
    status_name = solver.status_name(code)
    status = status_name if status_name in _STATUSES else "UNKNOWN"
    has_objective = model.has_objective()
    out = CpsatRun(status, solver, stats={"solver_status": status_name, "wall_time": solver.wall_time,
                                          "branches": solver.num_branches, "conflicts": solver.num_conflicts})
    if has_objective and status in ("OPTIMAL", "FEASIBLE"):
        out.objective = solver.objective_value
    if has_objective and status != "INFEASIBLE" and math.isfinite(solver.best_objective_bound):
        # a search stopped before its first solution has still proven this bound
        out.bound = solver.best_objective_bound
    return out
