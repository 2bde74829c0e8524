"""The result every exact model of the toolkit returns, and the contract it keeps.

The contract (the same for every problem family and backend):

* ``OPTIMAL`` only when the returned objective, evaluated on the user's own
  data (never on a scaled or rounded copy), is within :data:`TOLERANCE`
  (relative) of a lower bound that is valid for the user's data. Then
  ``gap <= TOLERANCE``. A model proven optimal only after rounding whose true
  gap is larger is reported ``FEASIBLE`` with that gap.
* ``FEASIBLE`` when a checked solution is known but the gap is open, e.g. the
  time limit was hit; the solution is at least as good as the heuristic the
  solve started from, and the bound stays valid.
* ``INFEASIBLE`` only when the model proved that no solution exists.
* ``UNKNOWN`` only when no feasible solution exists or is known.

:meth:`Result.from_bounds` derives the status from the objective and bound,
so a family cannot overstate by construction.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import Any

from instances.errors import SolverError

__all__ = ["Result", "Status", "TOLERANCE"]

#: Relative gap ``(objective - lower_bound) / |objective|`` at or below which a result is OPTIMAL.
TOLERANCE = 1e-6


class Status(str, enum.Enum):
    """Outcome of an exact solve (see the module docstring for the contract)."""

    OPTIMAL = "OPTIMAL"
    FEASIBLE = "FEASIBLE"
    INFEASIBLE = "INFEASIBLE"
    UNKNOWN = "UNKNOWN"

    def __str__(self) -> str:  # print as the bare name
        return self.value


def _gap(objective: float | None, lower_bound: float | None) -> float | None:
    if objective is None or lower_bound is None:
        return None
    if objective <= lower_bound:
        return 0.0
    if objective == 0:
        return math.inf
    return (objective - lower_bound) / abs(objective)


@dataclass
class Result:
    """What :func:`milp.solve_optimal` returns, for every problem family.

    Attributes
    ----------
    objective
        Objective value of the best solution found, evaluated on the user's
        data (``None`` if none).
    lower_bound
        A lower bound on the optimum, valid for the user's data (``None`` if
        none is known).
    status
        :class:`Status`, under the contract of the module docstring.
    runtime
        Wall-clock seconds of the whole call, model building included.
    schedule
        The best solution in the family's own solution type, already passed
        by the family's independent checker (``None`` if none).
    backend
        ``"cpsat"``, ``"highs"``, or the family's own method name.
    info
        Backend-specific extras (scaling resolution, solver statistics, ...).

    Examples
    --------
    >>> r = Result.from_bounds(10.0, 9.5, schedule="s", runtime=1.25, backend="cpsat")
    >>> print(r)
    FEASIBLE objective=10 bound=9.5 gap=5% runtime=1.25s backend=cpsat
    >>> Result.from_bounds(10.0, 10.0 - 1e-7, schedule="s").status
    <Status.OPTIMAL: 'OPTIMAL'>
    >>> Result(10.0, 9.0, Status.OPTIMAL, 1.0, schedule="s")
    Traceback (most recent call last):
    ...
    instances.errors.SolverError: OPTIMAL needs a solution and a gap <= 1e-06; got objective 10.0, bound 9.0
    """

    objective: float | None
    lower_bound: float | None
    status: Status
    runtime: float
    schedule: Any = None
    backend: str = ""
    info: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.status = Status(self.status)
        if self.status is Status.OPTIMAL:
            # a Result built by hand must not claim more than its numbers prove
            gap = _gap(self.objective, self.lower_bound)
            if self.schedule is None or gap is None or gap > TOLERANCE:
                raise SolverError(f"OPTIMAL needs a solution and a gap <= {TOLERANCE:g}; got objective "
                                  f"{self.objective!r}, bound {self.lower_bound!r}")

    @classmethod
    def from_bounds(cls, objective: float | None, lower_bound: float | None, *, schedule: Any,
                    runtime: float = 0.0, backend: str = "", info: dict[str, Any] | None = None,
                    infeasible: bool = False) -> "Result":
        """A result whose status follows from its numbers (the module's contract).

        Parameters
        ----------
        objective
            Objective of ``schedule`` on the user's data (``None`` without one).
        lower_bound
            A bound valid for the user's data. A bound above the objective by
            more than the tolerance is a model bug and raises
            :class:`~instances.errors.SolverError`; within it, it is capped at
            the objective.
        schedule
            The checked solution, or ``None``.
        infeasible
            The model proved that no solution exists.
        """
        info = dict(info or {})
        if infeasible:
            return cls(None, None, Status.INFEASIBLE, runtime, None, backend, info)
        if schedule is None or objective is None:
            return cls(None, lower_bound, Status.UNKNOWN, runtime, None, backend, info)
        if lower_bound is not None and lower_bound > objective:
            if lower_bound - objective > TOLERANCE * max(1.0, abs(objective)):
                raise SolverError(f"bound {lower_bound!r} exceeds the objective {objective!r} of a checked "
                                  "solution (a model bug)")
            lower_bound = objective
        gap = _gap(objective, lower_bound)
        status = Status.OPTIMAL if gap is not None and gap <= TOLERANCE else Status.FEASIBLE
        return cls(objective, lower_bound, status, runtime, schedule, backend, info)

    @property
    def gap(self) -> float | None:
        """Relative gap ``(objective - lower_bound) / |objective|``; ``<= TOLERANCE`` when OPTIMAL."""
        return _gap(self.objective, self.lower_bound)

    @property
    def proven(self) -> bool:
        """Whether the status is OPTIMAL."""
        return self.status is Status.OPTIMAL

    def __str__(self) -> str:
        def num(x: float | None) -> str:
            return "-" if x is None else f"{x:.6g}"

        gap = self.gap
        gap_text = "-" if gap is None else ("inf" if math.isinf(gap) else f"{100 * gap:.3g}%")
        return (f"{self.status} objective={num(self.objective)} bound={num(self.lower_bound)} "
                f"gap={gap_text} runtime={self.runtime:.3g}s backend={self.backend or '-'}")
